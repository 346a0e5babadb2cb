#include "experiments/report/scale.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

namespace attn::experiments {

namespace {
// viridis sampled at 0, 0.1, ..., 1 (R, G, B); between samples we interpolate linearly.
constexpr int kViridis[11][3] = {{68, 1, 84},    {72, 36, 117},  {65, 68, 135},  {53, 95, 141},
                                 {42, 120, 142}, {33, 145, 140}, {34, 168, 132}, {68, 191, 112},
                                 {122, 209, 81}, {189, 223, 38}, {253, 231, 37}};
}  // namespace

std::string viridis(double t) {
  if (!std::isfinite(t)) t = 0;
  t = std::clamp(t, 0.0, 1.0) * 10.0;
  const int i = std::min(static_cast<int>(t), 9);
  const double f = t - i;
  int rgb[3];
  for (int c = 0; c < 3; ++c)
    rgb[c] = static_cast<int>(std::lround(kViridis[i][c] * (1 - f) + kViridis[i + 1][c] * f));
  return fmt::format("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2]);
}

std::vector<std::string> viridis_stops(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(viridis(n == 1 ? 0.0 : double(i) / (n - 1)));
  return out;
}

bool viridis_is_dark(double t) {
  return t < 0.55;
}

std::vector<double> nice_ticks(double lo, double hi, int max_count) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / std::max(1, max_count - 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> ticks;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  if (!(lo > 0) || !(hi > lo)) return {lo};
  const int a = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int b = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  const bool few = b - a <= 3;
  // Over many decades label only every k-th power of ten (multiples of k), at most ~10 labels.
  const int every = std::max(1, (b - a + 9) / 10);
  for (int e = a; e <= b; ++e)
    for (double m : few ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
      const double v = m * std::pow(10.0, e);
      if (e % every == 0 && v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
    }
  return ticks;
}

std::string display_token(const std::string& token) {
  if (token == " ") return "\u2423";
  if (token == "\n") return "\u23ce";
  if (token == "\t") return "\u21e5";
  return token;
}

std::vector<std::string> display_tokens(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  for (const auto& t : tokens) out.push_back(display_token(t));
  return out;
}

const std::string& palette(size_t i) {
  static const std::array<std::string, 8> colours{"#2563eb", "#f59e0b", "#10b981", "#ef4444",
                                                  "#8b5cf6", "#06b6d4", "#ec4899", "#6b7280"};
  return colours[i % colours.size()];
}

}  // namespace attn::experiments
