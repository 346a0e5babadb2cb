// One quantity measured over repeated runs (seeds): its spread, and the "mean ± sd" table cell
// the seed-averaged experiments print.
//
//   const kit::Spread s = kit::spread_over(runs, &Outcome::accuracy);  // over the runs
//   t.add_row({"accuracy", kit::mean_sd(s)});                          // "0.927 ± 0.015"
//   kit::mean_sd(kit::spread_of(xs), 2);                               // "0.93 ± 0.02"
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

// "mean ± sd", both with `precision` decimals.
inline std::string mean_sd(const Spread& s, int precision = 3) {
  return fmt::format("{} ± {}", fixed(s.mean, precision), fixed(s.sd, precision));
}

}  // namespace attn::experiments::kit
