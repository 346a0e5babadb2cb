// A quantity measured over repeated runs (seeds): its spread, and the "mean ± sd" table cell the
// seed-averaged experiments print, both numbers to the same precision.
//
//   kit::spread_text(kit::spread_of({0.91, 0.94, 0.93}));    // "0.927 ± 0.015"
//   t.add_row({"loss", kit::spread_text(losses, 2)});        // straight from per-seed values
//   const kit::Spread s = kit::spread_over(runs, &Outcome::accuracy);   // over rows of results
#pragma once

#include <string>
#include <vector>

#include <fmt/format.h>

#include "experiments/kit/spread.h"
#include "experiments/kit/summary.h"
#include "experiments/report/table.h"

namespace attn::experiments::kit {

// spread_of(column(rows, field)): field is anything std::invoke takes (see summary.h).
template <class Row, class Field>
Spread spread_over(const std::vector<Row>& rows, Field field) {
  return spread_of(column(rows, field));
}

inline std::string spread_text(const Spread& s, int precision = 3) {
  return fmt::format("{} ± {}", fixed(s.mean, precision), fixed(s.sd, precision));
}

inline std::string spread_text(const std::vector<double>& xs, int precision = 3) {
  return spread_text(spread_of(xs), precision);
}

}  // namespace attn::experiments::kit
