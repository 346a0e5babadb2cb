// A rate as the tables print it: one decimal of a percent, "-" when there is none (NaN: no
// length, seed or example to average over).
//
//   kit::percent(0.8734);      // "87.3%"
//   kit::percent(std::nan(""));  // "-"
#pragma once

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace attn::experiments::kit {

inline std::string percent(double rate) {
  return std::isnan(rate) ? "-" : fmt::format("{:.1f}%", 100 * rate);
}

}  // namespace attn::experiments::kit
