# bench/: micro-benchmarks (Google Benchmark) and the `attnlab bench` workloads.
#   attn_bench        library: harness + workloads W1..W5 + run_bench_command (bench/bench_main.h)
#   attn_bench_cli    `attnlab bench` as its own program (used by scripts/bench)
#   attn_microbench   matmul through the tape vs raw sgemm, softmax/layer_norm GB/s, tape overhead
#   attn_gemm_shapes  the experiments' matrix products, our kernels vs OpenBLAS, one thread
# They are benchmarks, never tests: see docs/performance.md and scripts/bench.
find_package(benchmark REQUIRED)

file(GLOB ATTN_BENCH_SRCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bench/*.cpp
     ${CMAKE_SOURCE_DIR}/bench/workloads/*.cpp)
list(FILTER ATTN_BENCH_SRCS EXCLUDE REGEX "bench/bench_cli\\.cpp$")
add_library(attn_bench STATIC ${ATTN_BENCH_SRCS})
target_include_directories(attn_bench PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(attn_bench PUBLIC attn_experiments attn_train attn_nn attn_data attn_autograd fmt::fmt
                                        nlohmann_json::nlohmann_json)

add_executable(attn_bench_cli ${CMAKE_SOURCE_DIR}/bench/bench_cli.cpp)
target_link_libraries(attn_bench_cli PRIVATE attn_bench CLI11::CLI11)

add_executable(attn_microbench ${CMAKE_SOURCE_DIR}/bench/micro/micro_bench.cpp)
target_include_directories(attn_microbench PRIVATE ${ATTN_CBLAS_INCLUDE})
target_link_libraries(attn_microbench PRIVATE attn_autograd benchmark::benchmark)

add_executable(attn_gemm_shapes ${CMAKE_SOURCE_DIR}/bench/micro/gemm_shapes.cpp)
target_include_directories(attn_gemm_shapes PRIVATE ${ATTN_CBLAS_INCLUDE})
target_link_libraries(attn_gemm_shapes PRIVATE attn_autograd OpenMP::OpenMP_CXX)

# `attnlab bench`: the CLI calls attn::bench::run_bench_command when ATTN_HAVE_BENCH is defined.
if(TARGET attnlab)
  target_link_libraries(attnlab PRIVATE attn_bench)
  target_compile_definitions(attnlab PRIVATE ATTN_HAVE_BENCH)
endif()

# attn_fma_peak: the FMA throughput the GEMM kernels are read against (bench/micro/fma_peak.cpp).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  add_executable(attn_fma_peak ${CMAKE_SOURCE_DIR}/bench/micro/fma_peak.cpp)
  target_link_libraries(attn_fma_peak PRIVATE OpenMP::OpenMP_CXX)
endif()
