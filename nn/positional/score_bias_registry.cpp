#include "nn/positional/score_bias_registry.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"
#include "nn/positional/position_kind.h"
#include "nn/row_names.h"

namespace attn::nn {

void ScoreBiasRegistry::add(ScoreBiasRow row) {
  row_names::Reserved reserved;
  for (const std::string& builtin : position_kind_names())
    reserved.emplace_back(builtin, fmt::format("the built-in positional scheme '{}'", builtin));
  row_names::check_new_row("score bias", row, static_cast<bool>(row.bias),
                           "has no bias function (.bias)", reserved, rows_);
  rows_.push_back(std::move(row));
}

const ScoreBiasRow* ScoreBiasRegistry::find(const std::string& name) const {
  return row_names::find_row(rows_, name);
}

ScoreBiasRegistry& score_bias_registry() {
  static auto* registry = new ScoreBiasRegistry;  // never destroyed: rows hold plugins' code
  return *registry;
}

Tensor score_bias_table(
    const ScoreBiasRow& row, int64_t nhead, int64_t tq, int64_t tk, bool causal) {
  if (nhead <= 0 || tq <= 0 || tk < tq)
    throw Error(fmt::format("score bias '{}': needs nhead > 0 and 0 < tq <= tk, got {}, {}, {}",
                            row.name, nhead, tq, tk));
  Tensor table({1, nhead, tq, tk});
  real* out = table.data();
  for (int64_t h = 0; h < nhead; ++h)
    for (int64_t q = 0; q < tq; ++q)
      for (int64_t k = 0; k < tk; ++k) {
        const int64_t query = tk - tq + q;
        const double b = causal && k > query ? 0.0 : row.bias(h, nhead, query, k);
        if (!std::isfinite(b))
          throw Error(
              fmt::format("score bias '{}': b(head {}, query {}, key {}) = {} is not finite",
                          row.name, h, query, k, b));
        *out++ = static_cast<real>(b);
      }
  return table;
}

}  // namespace attn::nn
