// The numerical rank and the top-k energy of a spectrum (attention_rank.h); the singular values
// themselves come from autograd/linalg/svd.h.
#include <algorithm>
#include <limits>

#include "experiments/efficient/attention_rank.h"

namespace attn::experiments::rank {

double rank_threshold(int64_t n) {
  return static_cast<double>(n) * static_cast<double>(std::numeric_limits<float>::epsilon());
}

int64_t numerical_rank(const std::vector<double>& s, int64_t n) {
  if (s.empty()) return 0;
  const double cut = s.front() * rank_threshold(n);
  return std::count_if(s.begin(), s.end(), [&](double v) { return v > cut; });
}

double top_energy(const std::vector<double>& s, int64_t k) {
  double top = 0, all = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    all += s[i] * s[i];
    if (static_cast<int64_t>(i) < k) top += s[i] * s[i];
  }
  return all > 0 ? top / all : 0;
}

}  // namespace attn::experiments::rank
