// Timing several pieces of work against each other on a machine other processes share: run them
// in alternation (a, b, c, a, b, c, ...) so a burst of outside load slows all of them alike, and
// summarise each by its median (typical cost) and min (least disturbed run).
//
//   std::vector<attn::experiments::Timing> t =
//       attn::experiments::time_interleaved({[&] { rnn(); }, [&] { attention(); }}, 20);
//   t[0].median_s / t[1].median_s;                 // the ratio, both under the same load
//   time_interleaved(works, 20, /*budget_s=*/1.0);  // fewer rounds when one round is slow
//   attn::experiments::load_average();              // 1-minute load average, for the report
//   { attn::experiments::ScopedThreads one(1); ... }  // 1 thread inside, the old count after
#pragma once

#include <functional>
#include <vector>

#include "experiments/common/timing.h"

namespace attn::experiments {

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
