#include "experiments/common/timing.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace attn::experiments {

double seconds_of(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Timing summarize(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return {seconds[seconds.size() / 2], seconds.front(), seconds.back()};
}

Timing time_median(const std::function<void()>& work, int reps, int warmup) {
  for (int i = 0; i < warmup; ++i) work();
  std::vector<double> s;
  for (int i = 0; i < std::max(1, reps); ++i) s.push_back(seconds_of(work));
  return summarize(std::move(s));
}

}  // namespace attn::experiments
