// Copying a matrix operand into the layout a register-blocked kernel reads.
//
//   pack_transposed(n, k, w, ldw, panel, 16);   // panel (k, 16) = the first n rows of w, as
//   columns
#pragma once

#include <cstdint>

#include "autograd/real.h"

namespace attn::kernels {

// dst[p * dst_stride + j] = b[j * ldb + p] for p < k, j < n: the transpose of b's first n rows
// (k values each), written as k rows of n.
void pack_transposed(
    int64_t n, int64_t k, const real* b, int64_t ldb, real* dst, int64_t dst_stride);

}  // namespace attn::kernels
