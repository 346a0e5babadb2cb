// The open registry of positional score biases: schemes that add a fixed b(h, i, j) to head h's
// score of query position i for key position j, as ALiBi does with -slope_h (i - j). A student
// adds rows from a shared library (nn/mixer/plugin.h, registry.add_score_bias) and runs them
// beside the built-in schemes: `attnlab run length-extrapolation --variants rope,MY-ROW --plugin
// FILE.so`, or in any DecoderOnlyTransformer through DecoderOnlyOptions::score_bias.
//
//   nn::score_bias_registry().add({.name = "log-distance", .source = "my coursework",
//                                  .idea = "-slope_h log(1 + i - j)",
//                                  .bias = [](int64_t h, int64_t nhead, int64_t i, int64_t j) {
//                                    return -std::exp2(-8.0 * (h + 1) / nhead) *
//                                           std::log1p(double(i - j));
//                                  }});
//   Tensor b = nn::score_bias_table(*nn::score_bias_registry().find("log-distance"), 4, 32, 32);
//
// The bias is fixed (no parameters, nothing to gradient-check): its table is a constant of the
// forward pass, computed for the T new queries over all keys. A causal model asks only for
// j <= i (the causal mask hides the rest, so those entries are 0 in its table); a value that is
// not finite is refused, naming the row. The six built-in schemes keep
// their names (nn/positional/position_kind.h): no row may take one of them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace attn::nn {

struct ScoreBiasRow {
  std::string name;    // as typed in --variants, e.g. "log-distance"
  std::string source;  // where the scheme comes from (a paper, the student's own words)
  std::string idea;    // one line for a report's table
  // b(head, nhead, query position, key position), positions counted from 0 in the whole text.
  std::function<double(int64_t head, int64_t nhead, int64_t query, int64_t key)> bias;
  std::string origin;  // "" for a built-in; the plugin file that added the row
};

class ScoreBiasRegistry {
 public:
  // Adds a row. Throws attn::UsageError when the name is not a plain word ([A-Za-z0-9_.-]), is a
  // built-in scheme's or another row's (ignoring case), or the row has no .bias.
  void add(ScoreBiasRow row);
  const ScoreBiasRow* find(const std::string& name) const;  // exact name, or nullptr
  const std::vector<ScoreBiasRow>& rows() const { return rows_; }

 private:
  std::vector<ScoreBiasRow> rows_;
};

// The process's registry (empty until a plugin loads: the built-in biases are PositionKinds).
ScoreBiasRegistry& score_bias_registry();

// (1, nhead, tq, tk): entry (h, q, k) = row.bias(h, nhead, tk - tq + q, k), the queries being the
// last tq of the tk positions (tq < tk: a decoding step after cached keys); with `causal`, 0 for
// a key after its query (never asked for). Throws attn::Error naming the row, the head and the
// positions of the first value that is not finite.
Tensor score_bias_table(
    const ScoreBiasRow& row, int64_t nhead, int64_t tq, int64_t tk, bool causal = true);

}  // namespace attn::nn
