# Test executables (doctest). Tests mirror the source tree (tests/autograd, tests/nn, ...) and
# every folder is globbed, so a new test file needs no CMake edit.
#   attn_tests      float build: unit tests of every area; run one area with -ts=autograd
#   attn_gradcheck  double build: the finite-difference sweep over the op and layer registries
# Each part's cmake/<part>.cmake appends its libraries to ATTN_TEST_LIBS / ATTN_GRADCHECK_LIBS.
find_package(doctest REQUIRED)

set(ATTN_UNIT_TESTS "")
foreach(area autograd nn data train experiments)
  file(GLOB_RECURSE area_tests CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/${area}/*.cpp)
  list(APPEND ATTN_UNIT_TESTS ${area_tests})
endforeach()
add_executable(attn_tests ${CMAKE_SOURCE_DIR}/tests/doctest_main.cpp ${ATTN_UNIT_TESTS})
target_link_libraries(attn_tests PRIVATE ${ATTN_TEST_LIBS} attn_autograd doctest::doctest)

file(GLOB_RECURSE ATTN_GRADCHECK_TESTS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/gradcheck/*.cpp)
add_executable(attn_gradcheck ${CMAKE_SOURCE_DIR}/tests/doctest_main.cpp ${ATTN_GRADCHECK_TESTS})
target_link_libraries(attn_gradcheck PRIVATE ${ATTN_GRADCHECK_LIBS} attn_autograd_f64
                                             doctest::doctest)

# Writes every op registry row's inputs, outputs and gradients for tests/parity/check_ops.py.
add_executable(attn_parity_dump ${CMAKE_SOURCE_DIR}/tests/parity/parity_dump.cpp)
target_link_libraries(attn_parity_dump PRIVATE attn_autograd)

enable_testing()
add_test(NAME unit COMMAND attn_tests)
add_test(NAME gradcheck COMMAND attn_gradcheck)
