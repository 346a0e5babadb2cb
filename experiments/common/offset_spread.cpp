#include "experiments/common/offset_spread.h"

#include "autograd/shape.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

std::vector<double> pairwise_dots(const Tensor& a, const Tensor& b, int64_t n) {
  if (a.rank() != 2 || b.rank() != 2 || a.size(1) != b.size(1) || n < 0 || n > a.size(0) ||
      n > b.size(0))
    throw Error(fmt::format("pairwise_dots: expected two (>= {}, d) matrices, got {} and {}", n,
                            shape_str(a.shape()), shape_str(b.shape())));
  const int64_t d = a.size(1);
  std::vector<double> s(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double v = 0;
      for (int64_t c = 0; c < d; ++c) v += double(a[i * d + c]) * double(b[j * d + c]);
      s[static_cast<size_t>(i * n + j)] = v;
    }
  return s;
}

OffsetSpread spread_by_offset(const std::vector<double>& s, int64_t n, bool absolute) {
  if (n <= 0 || static_cast<int64_t>(s.size()) != n * n)
    throw Error(fmt::format("spread_by_offset: expected {} x {} = {} entries, got {}", n, n, n * n,
                            s.size()));
  // Group g: offset i - j shifted by n - 1 so it starts at 0; or |i - j|.
  const int64_t groups = absolute ? n : 2 * n - 1;
  auto group = [&](int64_t i, int64_t j) { return absolute ? std::llabs(i - j) : i - j + n - 1; };
  std::vector<double> sum(groups, 0.0), count(groups, 0.0);
  OffsetSpread r;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double v = s[i * n + j];
      sum[group(i, j)] += v;
      count[group(i, j)] += 1;
      r.max_abs = std::max(r.max_abs, std::abs(v));
    }
  for (int64_t g = 0; g < groups; ++g) {
    r.offsets.push_back(static_cast<double>(absolute ? g : g - (n - 1)));
    r.means.push_back(sum[g] / count[g]);
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      r.max_deviation = std::max(r.max_deviation, std::abs(s[i * n + j] - r.means[group(i, j)]));
  return r;
}

}  // namespace attn::experiments
