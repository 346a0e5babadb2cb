// attention-rank's parts: singular values of attention matrices in double precision, the
// numerical rank and the energy held by the largest singular values, and the three parts of the
// experiment (attention_rank.cpp runs them in order).
//
//   const std::vector<double> s = rank::singular_values(a);      // a (R,C) float32, descending
//   int64_t r = rank::numerical_rank(s, std::max(a.size(0), a.size(1)));
//   double e = rank::top_energy(s, 8);   // share of sum s_i^2 held by the 8 largest
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/linalg/svd.h"
#include "autograd/tensor.h"
#include "experiments/config.h"
#include "experiments/report/compare.h"

namespace attn::experiments {
class RunContext;
}

namespace attn::experiments::rank {

// The singular values of a (R,C) matrix, largest first, in double: one-sided Jacobi rotations
// (autograd/linalg/svd.h, shared with nn::SvfLinear).
using linalg::singular_values;

// Relative threshold of the numerical rank: singular values below s_max * n * eps(float32) are
// indistinguishable from the rounding of a float32 matrix of side n (each entry carries a
// relative error up to eps = 2^-23 ~ 1.19e-7, and an n x n matrix of such errors has a
// spectral norm up to about n eps s_max). The same rule as numpy.linalg.matrix_rank's default,
// with float32's eps since our matrices are computed in float32.
double rank_threshold(int64_t n);
// How many singular values (sorted, largest first) exceed s[0] * rank_threshold(n).
int64_t numerical_rank(const std::vector<double>& s, int64_t n);
// sum_{i<k} s_i^2 / sum_i s_i^2: the share of the squared Frobenius norm (the "energy") the k
// largest singular values hold; the best rank-k approximation misses the rest (Eckart-Young).
double top_energy(const std::vector<double>& s, int64_t k);

// ---- the parts ---------------------------------------------------------------------------------

// Part 1, random Q and K: the numerical rank of QK^T / sqrt(d), softmax of it and linear
// attention's phi(Q) phi(K)^T over the grid of lengths x widths, and over logit scales;
// adds the document rows of 004 §2.4 to cmp.
void random_matrix_part(const Config& cfg, RunContext& ctx, DocumentComparison& cmp);

// Part 2, a trained character LM: the top-k energy of every layer's attention matrices over
// seeds, beside the untrained model's; adds the rows of 004 §4.1 (low rank, more so higher up).
void trained_layers_part(const Config& cfg, RunContext& ctx, DocumentComparison& cmp);

// Part 3, Linformer's projection rank k against held-out accuracy on associative recall, with
// k = T (no compression) as the reference; adds one row per k < T.
void linformer_part(const Config& cfg, RunContext& ctx, DocumentComparison& cmp);

}  // namespace attn::experiments::rank
