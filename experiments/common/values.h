// Small conversions between tensors and plain numbers for experiments and reports.
//
//   Tensor x = attn::experiments::matrix_from(3, 2, {1, 0, 0, 1, 1, 1});   // (3,2)
//   std::vector<double> r = attn::experiments::row_values(x, 2);             // {1, 1}
//   std::vector<double> all = attn::experiments::values(x);                  // 6 numbers
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace attn::experiments {

// (rows, cols) from row-major numbers; an error naming `what` when the count is wrong.
Tensor matrix_from(int64_t rows,
                   int64_t cols,
                   const std::vector<double>& values,
                   const std::string& what = "matrix");
std::vector<double> values(const Tensor& t);
// The (n, n) identity matrix.
Tensor identity(int64_t n);
std::vector<double> row_values(const Tensor& m, int64_t r);
// Labels "0", "1", ... or prefix + index.
std::vector<std::string> index_labels(int64_t n, const std::string& prefix = "");

}  // namespace attn::experiments
