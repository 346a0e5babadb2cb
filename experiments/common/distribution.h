// Measures of how spread out a probability row is (attention rows, softmax outputs).
//
//   std::vector<attn::real> p{0.5f, 0.25f, 0.25f};
//   attn::experiments::entropy(p.data(), 3);            // 1.0397 nats; log 3 would be uniform
//   attn::experiments::mean_row_entropy(weights);        // weights (..., C): mean over the rows
//   attn::experiments::mean_row_max(weights);            // mean of each row's largest weight
#pragma once

#include <cstdint>

#include "autograd/tensor.h"

namespace attn::experiments {

// H(p) = -sum_j p_j log p_j in nats (a zero weight adds nothing: p log p -> 0), accumulated in
// double. 0 for a one-hot row, log n for the uniform row of n.
double entropy(const real* p, int64_t n);
// Over the rows of a tensor (..., C) of probability rows: the mean entropy, the mean largest
// weight.
double mean_row_entropy(const Tensor& rows);
double mean_row_max(const Tensor& rows);

}  // namespace attn::experiments
