#include "autograd/kernels/causal_blocks.h"

#include <omp.h>

namespace attn::kernels {

int64_t triangle_jobs_per_matrix(int64_t matrices, int64_t rows) {
  const int64_t threads = omp_in_parallel() ? 1 : num_threads();
  if (matrices >= 2 * threads) return 1;
  const int64_t wanted = (2 * threads + matrices - 1) / std::max<int64_t>(matrices, 1);
  return std::clamp<int64_t>(wanted, 1, std::max<int64_t>(1, rows / 32));
}

}  // namespace attn::kernels
