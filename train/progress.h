// Progress of a long loop: a one-line bar on a terminal, plain periodic lines otherwise.
//
//   attn::train::Progress bar(/*total=*/2000, attn::train::ProgressMode::kAuto, /*every=*/100);
//   for (int64_t s = 1; s <= 2000; ++s) bar.update(s, {{"loss", 0.5}}, tokens_per_s);
//   bar.finish();
//
// On a terminal (isatty(stdout)): "\r[#####.....] 1200/2000 loss 0.512 | 15.2k tok/s | ETA 0:41",
// redrawn at most 10 times a second. Not a terminal (a log file, CI): one line every `every`
// steps, "step 1200/2000 loss 0.512 15.2k tok/s elapsed 61.0s eta 40.7s".
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "train/metrics.h"

namespace attn::train {

enum class ProgressMode { kAuto, kBar, kLines, kOff };

class Progress {
 public:
  // start_step: steps already done before this run (on resume), for the ETA.
  Progress(int64_t total,
           ProgressMode mode,
           int64_t every,
           int64_t start_step = 0,
           std::FILE* out = stdout);
  void update(int64_t step, const Metrics& values, double tokens_per_second);
  // Prints a message on its own line (clearing the bar first).
  void message(const std::string& line);
  void finish();
  bool is_bar() const { return mode_ == ProgressMode::kBar; }

 private:
  std::string status(int64_t step, const Metrics& values, double tokens_per_second) const;
  int64_t total_, every_, start_;
  ProgressMode mode_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point begin_, last_draw_;
  bool drawn_ = false;
};

// "1:05" or "1:02:03" for a number of seconds; "?" when not finite.
std::string format_duration(double seconds);
// "950 tok/s", "15.2k tok/s", "1.3M tok/s".
std::string format_rate(double tokens_per_second);

}  // namespace attn::train
