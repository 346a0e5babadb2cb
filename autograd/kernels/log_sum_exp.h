// log(sum_j exp(x_j)) of one row, without overflow: the normaliser of log-softmax.
//
//   real lse = attn::kernels::log_sum_exp(row, n);   // log_softmax_j = row[j] - lse
//
// With m = max_j x_j, log sum_j exp(x_j) = m + log sum_j exp(x_j - m): every shifted exponent
// is <= 0 (no overflow) and the largest term is exp(0) = 1 (the log never sees 0).
#pragma once

#include <cstdint>

#include "autograd/kernels/vec_math.h"
#include "autograd/real.h"

namespace attn::kernels {

// The loop is kernels::log_sum_exp_row (vec_math.cpp: vectorised exp in the float build).
inline real log_sum_exp(const real* x, int64_t n) {
  return log_sum_exp_row(x, n);
}

}  // namespace attn::kernels
