#include <cmath>
#include <string>

#include <fmt/format.h>

#include "experiments/measured_times.h"

namespace attn::experiments {

std::string time_text(double seconds) {
  if (seconds < 1) return "< 1 s";
  if (seconds < 90) return fmt::format("~{:.0f} s", seconds);
  const double minutes = seconds / 60;
  // Half minutes up to 10 min (a 2-minute and a 2.5-minute run differ for a student), then whole.
  if (minutes < 10) return fmt::format("~{:g} min", std::round(minutes * 2) / 2);
  return fmt::format("~{:.0f} min", minutes);
}

}  // namespace attn::experiments
