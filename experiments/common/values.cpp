#include "experiments/common/values.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

Tensor matrix_from(int64_t rows,
                   int64_t cols,
                   const std::vector<double>& values,
                   const std::string& what) {
  if (rows <= 0 || cols <= 0 || static_cast<int64_t>(values.size()) != rows * cols)
    throw UsageError(fmt::format("{}: expected {} x {} = {} numbers, got {}", what, rows, cols,
                                 rows * cols, values.size()));
  Tensor t({rows, cols});
  for (int64_t i = 0; i < rows * cols; ++i) t[i] = static_cast<real>(values[i]);
  return t;
}

std::vector<double> values(const Tensor& t) {
  return std::vector<double>(t.data(), t.data() + t.numel());
}

std::vector<double> row_values(const Tensor& m, int64_t r) {
  const int64_t cols = m.size(-1);
  return std::vector<double>(m.data() + r * cols, m.data() + (r + 1) * cols);
}

std::vector<std::string> index_labels(int64_t n, const std::string& prefix) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

Tensor identity(int64_t n) {
  Tensor m({n, n});
  for (int64_t i = 0; i < n; ++i) m[i * n + i] = 1;
  return m;
}

}  // namespace attn::experiments
