#include "autograd/random_links.h"

#include <fmt/format.h>

#include <algorithm>

#include "autograd/error.h"
#include "autograd/generator.h"

namespace attn {

namespace {

// The keys row i may link to, counted and indexed without listing them. Before the global
// tokens are taken out they are the "base" keys: causal, [0, i - w); otherwise [0, lo) then
// (hi, T) around the band [lo, hi]. Base index b maps to key b (b < lo) or b + band size.
struct RowCandidates {
  int64_t lo = 0, band = 0, base_count = 0;
  std::vector<int64_t> excluded;  // base indices of the global keys among them, ascending

  RowCandidates(
      int64_t t, int64_t i, int64_t window, bool causal, const std::vector<int64_t>& globals) {
    if (causal) {
      lo = base_count = std::max<int64_t>(0, i - window);
    } else {
      lo = std::max<int64_t>(0, i - window);
      band = std::min(t - 1, i + window) - lo + 1;
      base_count = t - band;
    }
    for (int64_t g : globals) {  // sorted, so excluded is too
      if (g < lo)
        excluded.push_back(g);
      else if (!causal && g >= lo + band)
        excluded.push_back(g - band);
    }
  }
  int64_t count() const { return base_count - static_cast<int64_t>(excluded.size()); }
  // The u-th allowed key (0 <= u < count()): step past every excluded base index at or below.
  int64_t key(int64_t u) const {
    int64_t b = u;
    for (int64_t e : excluded)
      if (e <= b) ++b;
    return b < lo ? b : b + band;
  }
};

}  // namespace

RandomLinks draw_random_links(int64_t t,
                              int64_t window,
                              bool causal,
                              const std::vector<int64_t>& global_tokens,
                              int64_t per_row,
                              uint64_t seed) {
  if (t <= 0 || window < 0 || per_row < 0)
    throw Error(fmt::format(
        "draw_random_links: need t > 0, window >= 0 and per_row >= 0, got t={} window={} "
        "per_row={}",
        t, window, per_row));
  std::vector<int64_t> globals = global_tokens;
  std::sort(globals.begin(), globals.end());
  globals.erase(std::unique(globals.begin(), globals.end()), globals.end());
  for (int64_t g : globals)
    if (g < 0 || g >= t)
      throw Error(fmt::format("draw_random_links: global token {} outside [0, {})", g, t));
  RandomLinks out{per_row, std::vector<int64_t>(static_cast<size_t>(t * per_row), -1)};
  if (per_row == 0) return out;
  Generator gen(seed);
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < t; ++i) {
    if (std::binary_search(globals.begin(), globals.end(), i)) continue;  // reads every key
    const RowCandidates c(t, i, window, causal, globals);
    const int64_t n = c.count(), r = std::min(per_row, n);
    // Floyd: for m = n - r .. n - 1 draw u in [0, m]; keep u, or m when u is already kept. Each
    // r-subset of [0, n) comes out with the same probability.
    picked.clear();
    for (int64_t m = n - r; m < n; ++m) {
      const int64_t u = gen.randint(m + 1);
      picked.push_back(std::find(picked.begin(), picked.end(), u) == picked.end() ? u : m);
    }
    std::sort(picked.begin(), picked.end());
    for (size_t s = 0; s < picked.size(); ++s)
      out.keys[static_cast<size_t>(i * per_row) + s] = c.key(picked[s]);
  }
  return out;
}

}  // namespace attn
