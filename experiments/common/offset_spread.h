// How far the entries of a square matrix are from depending on the offset alone: the entries
// are grouped by i - j (or by |i - j|), and each group's spread around its mean is measured.
//
//   std::vector<double> s = ...;                      // (n*n) row-major, s[i*n + j]
//   OffsetSpread r = spread_by_offset(s, n, /*absolute=*/false);
//   r.max_deviation / r.max_abs;                      // ~1e-7: s(i,j) = f(i - j) to rounding
//   r.offsets, r.means;                               // f, for a plot
//
// A matrix s(i,j) = f(i - j) is a Toeplitz matrix (constant along every diagonal), and its
// max_deviation is 0 up to rounding; an absolute-position term (q . p_j, say) adds entries
// that change along a diagonal, and max_deviation measures them.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/tensor.h"

namespace attn::experiments {

// s[i*n + j] = a_i . b_j over the first n rows of a and b (both (rows >= n, d)), accumulated
// in double: the matrix spread_by_offset reads (scores q_i . k_j, or PE(i) . PE(j)).
std::vector<double> pairwise_dots(const Tensor& a, const Tensor& b, int64_t n);

struct OffsetSpread {
  std::vector<double> offsets;  // i - j from -(n-1) to n-1, or |i - j| from 0 to n-1
  std::vector<double> means;    // the mean entry of each group
  double max_deviation = 0;     // max over entries of |s(i,j) - mean of its group|
  double max_abs = 0;           // max |s(i,j)|, the scale to read max_deviation against
};

OffsetSpread spread_by_offset(const std::vector<double>& s, int64_t n, bool absolute);

}  // namespace attn::experiments
