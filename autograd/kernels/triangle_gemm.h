// A product with a triangle (blas.h's Triangle) too big for small_gemm's packed panel: cut into
// blocks of rows, and each block into a rectangle that every row of the block needs whole (one
// ordinary BLAS product) and the triangle's edge (small_gemm, which skips the unneeded part).
//
//   kernels::gemm(call);   // routes here by itself when call.triangle is set and the panel is big
#pragma once

#include "autograd/kernels/blas.h"

namespace attn::kernels {

inline constexpr int64_t kTriangleBlockRows = 64;

void triangle_gemm_by_blocks(const GemmCall& g);

}  // namespace attn::kernels
