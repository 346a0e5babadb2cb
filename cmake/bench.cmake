# bench/: micro-benchmarks (Google Benchmark) and the `attnlab bench` workloads.
#   attn_microbench   matmul through the tape vs raw sgemm, softmax/layer_norm GB/s, tape overhead
# Run them with scripts/bench (see docs/performance.md); they are benchmarks, never tests.
find_package(benchmark REQUIRED)

add_executable(attn_microbench ${CMAKE_SOURCE_DIR}/bench/micro/micro_bench.cpp)
target_include_directories(attn_microbench PRIVATE ${ATTN_CBLAS_INCLUDE})
target_link_libraries(attn_microbench PRIVATE attn_autograd benchmark::benchmark)
