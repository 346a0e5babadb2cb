#include "autograd/kernels/parallel.h"

#include <omp.h>

#include <cstdlib>
#include <string>

#include "autograd/error.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace attn {

void set_num_threads(int n) {
  if (n <= 0) n = omp_get_num_procs();
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int num_threads() {
  return omp_get_max_threads();
}

void init_threads_from_env() {
  const char* env = std::getenv("ATTN_THREADS");
  if (!env || !*env) return;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  if (*end != '\0' || n < 0 || n > 1024)
    throw Error(
        std::string("ATTN_THREADS must be a whole number of threads (0 = all cores), got '") + env +
        "'");
  set_num_threads(static_cast<int>(n));
}

}  // namespace attn
