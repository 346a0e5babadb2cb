#include "experiments/common/patch_positions.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

Tensor position_similarity(const Tensor& pos) {
  if (pos.rank() != 3 || pos.size(0) != 1 || pos.size(1) < 2)
    throw Error("position_similarity: expected pos_embed (1,1+N,d), got " + shape_str(pos.shape()));
  const int64_t n = pos.size(1) - 1, d = pos.size(2);
  std::vector<double> mean(static_cast<size_t>(d), 0.0), centred(static_cast<size_t>(n * d));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < d; ++k)
      mean[static_cast<size_t>(k)] += pos[(1 + i) * d + k] / static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < d; ++k)
      centred[static_cast<size_t>(i * d + k)] = pos[(1 + i) * d + k] - mean[static_cast<size_t>(k)];
  auto row = [&](int64_t i) { return centred.data() + i * d; };  // patch i, centred
  std::vector<double> norm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t k = 0; k < d; ++k) s += row(i)[k] * row(i)[k];
    norm[static_cast<size_t>(i)] = std::sqrt(s);
  }
  Tensor sim({n, n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double dot = 0;
      for (int64_t k = 0; k < d; ++k) dot += row(i)[k] * row(j)[k];
      const double den = norm[static_cast<size_t>(i)] * norm[static_cast<size_t>(j)];
      sim[i * n + j] = static_cast<real>(den > 0 ? dot / den : 0.0);
    }
  return sim;
}

double similarity_distance_correlation(const Tensor& sim, int64_t grid) {
  const int64_t n = grid * grid;
  if (sim.rank() != 2 || sim.size(0) != n || sim.size(1) != n)
    throw Error(
        fmt::format("similarity_distance_correlation: expected ({},{}) for a {}x{} grid, "
                    "got {}",
                    n, n, grid, grid, shape_str(sim.shape())));
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0, m = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const double x = sim[i * n + j];
      const double y = std::hypot(static_cast<double>(i / grid - j / grid),
                                  static_cast<double>(i % grid - j % grid));
      sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y, m += 1;
    }
  const double cov = sxy / m - sx / m * sy / m;
  const double vx = sxx / m - sx / m * sx / m, vy = syy / m - sy / m * sy / m;
  return vx > 0 && vy > 0 ? cov / std::sqrt(vx * vy) : 0.0;
}

double same_line_gap(const Tensor& sim, int64_t grid) {
  const int64_t n = grid * grid;
  if (sim.rank() != 2 || sim.size(0) != n || sim.size(1) != n)
    throw Error(fmt::format("same_line_gap: expected ({},{}) for a {}x{} grid, got {}", n, n, grid,
                            grid, shape_str(sim.shape())));
  double line = 0, other = 0, n_line = 0, n_other = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      if (i == j) continue;
      if (i / grid == j / grid || i % grid == j % grid)
        line += sim[i * n + j], n_line += 1;
      else
        other += sim[i * n + j], n_other += 1;
    }
  return (n_line > 0 ? line / n_line : 0.0) - (n_other > 0 ? other / n_other : 0.0);
}

}  // namespace attn::experiments
