// Timing work the way a noisy 2-core machine needs. One piece alone: warm up, time every
// repetition on its own, report the median (a repetition another process interrupted is an
// outlier, not the typical cost). Several pieces against each other: run them in alternation
// (a, b, c, a, b, c, ...) so a burst of outside load slows all of them alike, and summarise each
// by its median (typical cost) and min (least disturbed run).
//
//   attn::experiments::Timing t = attn::experiments::time_median([&] { forward(); }, 20, 3);
//   t.median_s; t.min_s; t.max_s;
//   std::vector<attn::experiments::Timing> t =
//       attn::experiments::time_interleaved({[&] { rnn(); }, [&] { attention(); }}, 20);
//   t[0].median_s / t[1].median_s;                 // the ratio, both under the same load
//   time_interleaved(works, 20, /*budget_s=*/1.0);  // fewer rounds when one round is slow
//   attn::experiments::load_average();              // 1-minute load average, for the report
//   { attn::experiments::ScopedThreads one(1); ... }  // 1 thread inside, the old count after
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

// The fewest timed rounds a budget may cut a measurement to (a median needs a few).
constexpr int kMinTimedRounds = 3;

// One warm-up round, then `reps` timed rounds — or fewer (at least kMinTimedRounds) when the
// first round shows that `reps` rounds would take longer than budget_s seconds.
std::vector<Timing> time_interleaved(const std::vector<std::function<void()>>& works,
                                     int reps,
                                     double budget_s = 0);  // 0: no budget

// The 1-minute load average from /proc/loadavg; NaN where it cannot be read.
double load_average();

// Sets the thread count (attn::set_num_threads) for a scope and restores the previous count
// when the scope ends, also by an exception. n = 0 leaves the count as it is.
class ScopedThreads {
 public:
  explicit ScopedThreads(int n = 0);
  ~ScopedThreads();
  ScopedThreads(const ScopedThreads&) = delete;
  ScopedThreads& operator=(const ScopedThreads&) = delete;

 private:
  int saved_;
};

}  // namespace attn::experiments
