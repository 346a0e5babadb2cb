// Entry point of the doctest executables: applies ATTN_THREADS, then runs the selected suites.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "autograd/kernels/parallel.h"

int main(int argc, char** argv) {
  attn::init_threads_from_env();
  doctest::Context context(argc, argv);
  return context.run();
}
