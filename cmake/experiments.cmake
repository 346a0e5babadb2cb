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
  target_link_libraries(attnlab PRIVATE attn_experiments)
endif()
