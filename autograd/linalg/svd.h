// The singular value decomposition of a matrix by one-sided Jacobi rotations, in double.
//
//   const attn::linalg::Svd d = attn::linalg::svd(w);   // w (R,C) = u diag(s) v^T
//   d.u;  // (R,k) orthonormal columns, k = min(R,C)
//   d.s;  // (k) singular values, largest first
//   d.v;  // (C,k) orthonormal columns
//   std::vector<double> s = attn::linalg::singular_values(w);   // the same s, in double
//
// Used by attention-rank (the spectra of attention matrices) and by nn::SvfLinear (Transformer²'s
// singular value fine-tuning decomposes a trained weight once, then scales its s).
#pragma once

#include <vector>

#include "autograd/tensor.h"

namespace attn::linalg {

struct Svd {
  Tensor u;  // (R,k): left singular vectors as columns
  Tensor s;  // (k): singular values, descending
  Tensor v;  // (C,k): right singular vectors as columns
};

// a (R,C) -> a = u diag(s) v^T with k = min(R,C) (the thin SVD). One-sided Jacobi (Hestenes):
// the columns of a (of a^T when a is wide) are rotated pairwise until every pair is orthogonal
// to rounding, the rotations multiplied into V; then a V = U diag(s), s_j the norm of column j
// and u_j the column over s_j (a zero column gives s_j = 0 and u_j = 0, which still rebuilds
// a). Exact to double rounding; O(R C^2) per sweep, ~10 sweeps: fine at C <= 256. Throws
// attn::Error for a tensor that is not a matrix or a run that does not converge.
Svd svd(const Tensor& a);

// The singular values of a (R,C) alone, largest first, in double (no vectors accumulated).
std::vector<double> singular_values(const Tensor& a);

}  // namespace attn::linalg
