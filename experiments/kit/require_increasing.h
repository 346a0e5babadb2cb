// The check of a list field that a sweep or a growth exponent reads: at least two values, each
// larger than the one before, and (when given) the first at least `min`.
//
//   kit::require_increasing(cfg, "lengths", "triangle-tradeoff", "lengths", 2);
//   // a UsageError otherwise:
//   //   "triangle-tradeoff: --lengths needs at least two increasing lengths >= 2"
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "autograd/error.h"
#include "experiments/config.h"

namespace attn::experiments::kit {

// `what` names the values in the message ("lengths", "sizes").
inline void require_increasing(const Config& cfg,
                               const std::string& field,
                               const std::string& experiment,
                               const std::string& what,
                               std::optional<int64_t> min = std::nullopt) {
  const std::vector<int64_t> xs = cfg.get_ints(field);
  if (xs.size() < 2 || !std::is_sorted(xs.begin(), xs.end()) ||
      std::adjacent_find(xs.begin(), xs.end()) != xs.end() || (min && xs.front() < *min))
    throw UsageError(fmt::format("{}: --{} needs at least two increasing {}{}", experiment, field,
                                 what, min ? fmt::format(" >= {}", *min) : ""));
}

}  // namespace attn::experiments::kit
