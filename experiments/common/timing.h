// Timing a small piece of work the way a noisy 2-core machine needs: warm up, time every
// repetition on its own, report the median (a repetition another process interrupted is an
// outlier, not the typical cost).
//
//   attn::experiments::Timing t = attn::experiments::time_median([&] { forward(); }, 20, 3);
//   t.median_s; t.min_s; t.max_s;
#pragma once

#include <functional>
#include <vector>

namespace attn::experiments {

struct Timing {
  double median_s = 0, min_s = 0, max_s = 0;
};

Timing time_median(const std::function<void()>& work, int reps, int warmup = 2);

// Wall-clock seconds of one call of work.
double seconds_of(const std::function<void()>& work);
// Median, min and max of a non-empty set of timings.
Timing summarize(std::vector<double> seconds);

}  // namespace attn::experiments
