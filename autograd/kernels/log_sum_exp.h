// log(sum_j exp(x_j)) of one row, without overflow: the normaliser of log-softmax.
//
//   real lse = attn::kernels::log_sum_exp(row, n);   // log_softmax_j = row[j] - lse
//
// With m = max_j x_j, log sum_j exp(x_j) = m + log sum_j exp(x_j - m): every shifted exponent
// is <= 0 (no overflow) and the largest term is exp(0) = 1 (the log never sees 0).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "autograd/real.h"

namespace attn::kernels {

inline real log_sum_exp(const real* x, int64_t n) {
  const real m = *std::max_element(x, x + n);
  real total = 0;
  for (int64_t j = 0; j < n; ++j) total += std::exp(x[j] - m);
  return m + std::log(total);
}

}  // namespace attn::kernels
