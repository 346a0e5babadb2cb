#include "train/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

namespace attn::train {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<int64_t>(std::llround(seconds));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string format_rate(double r) {
  if (r >= 1e6) return fmt::format("{:.1f}M tok/s", r / 1e6);
  if (r >= 1e4) return fmt::format("{:.1f}k tok/s", r / 1e3);
  return fmt::format("{:.0f} tok/s", r);
}

Progress::Progress(
    int64_t total, ProgressMode mode, int64_t every, int64_t start_step, std::FILE* out)
    : total_(total), every_(every > 0 ? every : 1), start_(start_step), mode_(mode), out_(out) {
  if (mode_ == ProgressMode::kAuto)
    mode_ = ::isatty(::fileno(out_)) ? ProgressMode::kBar : ProgressMode::kLines;
  begin_ = last_draw_ = std::chrono::steady_clock::now();
}

std::string Progress::status(int64_t step, const Metrics& values, double tps) const {
  std::string s;
  for (const auto& [k, v] : values) s += fmt::format(" {} {:.4g}", k, v);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  const int64_t done = step - start_;
  const double eta =
      done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - step) : NAN;
  if (mode_ == ProgressMode::kBar)
    return fmt::format("{}/{}{} | {} | ETA {}", step, total_, s, format_rate(tps),
                       format_duration(eta));
  return fmt::format("step {}/{}{} {} elapsed {:.1f}s eta {}", step, total_, s, format_rate(tps),
                     elapsed, format_duration(eta));
}

void Progress::update(int64_t step, const Metrics& values, double tps) {
  if (mode_ == ProgressMode::kOff) return;
  if (mode_ == ProgressMode::kLines) {
    if (step % every_ == 0 || step == total_) fmt::print(out_, "{}\n", status(step, values, tps));
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && step != total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  constexpr int kWidth = 24;
  const double frac = total_ > 0 ? static_cast<double>(step) / static_cast<double>(total_) : 1.0;
  const int filled = static_cast<int>(frac * kWidth);
  fmt::print(out_, "\r\033[K[{}{}] {}", std::string(static_cast<size_t>(filled), '#'),
             std::string(static_cast<size_t>(kWidth - filled), '.'), status(step, values, tps));
  std::fflush(out_);
}

void Progress::message(const std::string& line) {
  if (mode_ == ProgressMode::kOff) return;
  if (mode_ == ProgressMode::kBar && drawn_) fmt::print(out_, "\r\033[K");
  fmt::print(out_, "{}\n", line);
  drawn_ = false;
  std::fflush(out_);
}

void Progress::finish() {
  if (mode_ == ProgressMode::kBar && drawn_) fmt::print(out_, "\n");
  drawn_ = false;
  std::fflush(out_);
}

}  // namespace attn::train
