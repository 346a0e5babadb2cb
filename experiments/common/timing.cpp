#include "experiments/common/timing.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace attn::experiments {

Timing time_median(const std::function<void()>& work, int reps, int warmup) {
  for (int i = 0; i < warmup; ++i) work();
  std::vector<double> s;
  for (int i = 0; i < std::max(1, reps); ++i) {
    const auto start = std::chrono::steady_clock::now();
    work();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(s.begin(), s.end());
  return {s[s.size() / 2], s.front(), s.back()};
}

}  // namespace attn::experiments
