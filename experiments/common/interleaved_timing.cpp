#include "experiments/common/interleaved_timing.h"

#include <fstream>

#include "experiments/kit/kit.h"

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

std::vector<Timing> time_interleaved(const std::vector<std::function<void()>>& works,
                                     int reps,
                                     double budget_s) {
  double round_s = 0;  // one warm-up round: caches, the buffer pool, thread start-up
  for (const auto& w : works) round_s += seconds_of(w);
  int rounds = std::max(1, reps);
  if (budget_s > 0 && round_s > 0)
    rounds =
        std::clamp(static_cast<int>(budget_s / round_s), std::min(kMinTimedRounds, rounds), rounds);
  std::vector<std::vector<double>> s(works.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < works.size(); ++i) s[i].push_back(seconds_of(works[i]));
  std::vector<Timing> out;
  for (auto& v : s) out.push_back(summarize(std::move(v)));
  return out;
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double l = std::numeric_limits<double>::quiet_NaN();
  if (!(in >> l)) return std::numeric_limits<double>::quiet_NaN();
  return l;
}

ScopedThreads::ScopedThreads(int n) : saved_(num_threads()) {
  if (n > 0) set_num_threads(n);
}

ScopedThreads::~ScopedThreads() {
  set_num_threads(saved_);
}

}  // namespace attn::experiments
