#include "experiments/common/distribution.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

double entropy(const real* p, int64_t n) {
  double h = 0;
  for (int64_t j = 0; j < n; ++j)
    if (p[j] > 0) h -= static_cast<double>(p[j]) * std::log(static_cast<double>(p[j]));
  return h;
}

namespace {

// Calls f(row pointer, row length) for every row of a (..., C) tensor; returns the mean of f.
template <class F>
double mean_over_rows(const Tensor& rows, const char* what, F f) {
  if (rows.rank() == 0 || rows.numel() == 0)
    throw Error(std::string(what) + ": needs a non-empty tensor of rank >= 1");
  const int64_t c = rows.shape().back(), n = rows.numel() / c;
  double total = 0;
  for (int64_t r = 0; r < n; ++r) total += f(rows.data() + r * c, c);
  return total / static_cast<double>(n);
}

}  // namespace

double mean_row_entropy(const Tensor& rows) {
  return mean_over_rows(rows, "mean_row_entropy", entropy);
}

double mean_row_max(const Tensor& rows) {
  return mean_over_rows(rows, "mean_row_max", [](const real* p, int64_t c) {
    return static_cast<double>(*std::max_element(p, p + c));
  });
}

}  // namespace attn::experiments
