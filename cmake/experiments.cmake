# experiments/: one file per experiment, the registry, report writers, and the CLI.
# Everything except experiments/cli/main.cpp forms attn_experiments (tested by attn_tests);
# the attnlab executable adds the CLI main.
file(GLOB_RECURSE ATTN_EXPERIMENT_SRCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/experiments/*.cpp)
list(FILTER ATTN_EXPERIMENT_SRCS EXCLUDE REGEX "experiments/cli/main\\.cpp$")
if(ATTN_EXPERIMENT_SRCS)
  add_library(attn_experiments STATIC ${ATTN_EXPERIMENT_SRCS})
  target_include_directories(attn_experiments PUBLIC ${CMAKE_SOURCE_DIR})
  target_link_libraries(attn_experiments PUBLIC attn_train attn_nn attn_data attn_autograd
                                                CLI11::CLI11)
else()
  add_library(attn_experiments INTERFACE)
  target_link_libraries(attn_experiments INTERFACE attn_train attn_nn attn_data attn_autograd
                                                   CLI11::CLI11)
endif()
list(PREPEND ATTN_TEST_LIBS attn_experiments)

if(EXISTS ${CMAKE_SOURCE_DIR}/experiments/cli/main.cpp)
  add_executable(attnlab ${CMAKE_SOURCE_DIR}/experiments/cli/main.cpp)
  target_link_libraries(attnlab PRIVATE attn_experiments ${CMAKE_DL_LIBS})
  # `--plugin FILE.so` (experiments/plugin/plugin_loader.h): a plugin links no attnlab library
  # (a static copy would bring a second, empty mixer registry), so its references to attnlab
  # resolve against this executable. ENABLE_EXPORTS (-rdynamic) exports the executable's
  # symbols, and the libraries a student's layer builds on are linked whole, so that a function
  # no experiment happens to call is there for the plugin too.
  set_target_properties(attnlab PROPERTIES ENABLE_EXPORTS ON)
  # (Given before the libraries, so the regular listing of the same archives adds nothing twice.)
  target_link_options(attnlab PRIVATE "LINKER:--whole-archive" $<TARGET_FILE:attn_nn>
                      $<TARGET_FILE:attn_autograd> "LINKER:--no-whole-archive")
endif()
