#include "nn/positional/position_kind.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "nn/positional/alibi.h"
#include "nn/positional/t5_bias.h"

namespace attn::nn {

const std::vector<std::string>& position_kind_names() {
  static const std::vector<std::string> names{"none", "learned", "sinusoidal",
                                              "rope", "alibi",   "t5_bias"};
  return names;
}

std::string position_kind_name(PositionKind kind) {
  return position_kind_names().at(static_cast<size_t>(kind));
}

PositionKind position_kind_from_name(const std::string& name, const std::string& what) {
  const auto& names = position_kind_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<PositionKind>(i);
  throw UsageError(
      fmt::format("unknown {} '{}' (choose from: {})", what, name, fmt::join(names, ", ")));
}

bool adds_to_embeddings(PositionKind kind) {
  return kind == PositionKind::kLearned || kind == PositionKind::kSinusoidal;
}

std::optional<Var> position_score_bias(
    PositionKind kind, const RelativePositionBias* t5, int64_t nhead, int64_t tq, int64_t tk) {
  if (kind == PositionKind::kAlibi) return Var::constant(alibi_bias(nhead, tq, tk));
  if (kind != PositionKind::kT5Bias) return std::nullopt;
  if (!t5) throw Error("position_score_bias: t5_bias needs its RelativePositionBias module");
  if (t5->nhead() != nhead)
    throw Error(fmt::format("position_score_bias: the T5 bias has {} heads, the attention {}",
                            t5->nhead(), nhead));
  return t5->forward(tq, tk);
}

}  // namespace attn::nn
