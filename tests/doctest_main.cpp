// Entry point of the doctest executables: applies ATTN_THREADS, says which kernels and how many
// threads run (a failure on one machine is only readable with that), then runs the suites.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "autograd/build_info.h"
#include "autograd/error.h"
#include "autograd/kernels/isa.h"
#include "autograd/kernels/parallel.h"

int main(int argc, char** argv) {
  attn::init_threads_from_env();
  try {
    attn::kernels::check_isa_choice();  // a bad ATTN_ISA stops the run here, with its message
  } catch (const attn::UsageError& e) {
    std::fprintf(stderr, "attnlab: %s\n", e.what());
    return 2;
  }
  std::printf("attnlab: %s kernels (%s), OpenBLAS %s kernels, %d thread(s)\n", attn::build_arch(),
              attn::simd_kernels(), attn::blas_core(), attn::num_threads());
  doctest::Context context(argc, argv);
  return context.run();
}
