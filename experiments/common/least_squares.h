// Linear least squares by Householder QR, in double: the X minimising |A X - B| (Frobenius).
//
//   LeastSquares ls = least_squares(a, b, n, m, k);   // a (n,m), b (n,k) row-major, n >= m
//   ls.x;                  // (m,k) row-major solution
//   ls.r_diagonal_ratio;   // max |R_ii| / min |R_ii|: large when columns of A are nearly
//                          // dependent (then many X fit almost equally well)
//
// Why QR and not the normal equations A^T A X = A^T B: forming A^T A squares the condition
// number, and the sinusoid-shift table is already badly conditioned in its slow columns.
// Householder: for each column j, a reflection H_j = I - 2 v v^T / (v^T v) zeroes the entries
// below the diagonal; applied to A and B alike, A becomes R (upper triangular) and the solution
// follows by back substitution R X = (Q^T B)[0:m].
#pragma once

#include <cstdint>
#include <vector>

namespace attn::experiments {

struct LeastSquares {
  std::vector<double> x;  // (m,k)
  double r_diagonal_ratio = 0;
};

// Throws attn::Error for n < m, sizes that do not match, or an exactly singular A.
LeastSquares least_squares(
    std::vector<double> a, std::vector<double> b, int64_t n, int64_t m, int64_t k);

}  // namespace attn::experiments
