// Which positional scheme a transformer uses, by name, and what each one changes in the model.
//
//   attn::nn::PositionKind k = attn::nn::position_kind_from_name("t5_bias");  // UsageError if bad
//   attn::nn::position_kind_name(k);                       // "t5_bias"
//   attn::nn::position_kind_names();                       // none learned sinusoidal rope ...
//   std::optional<attn::Var> b = attn::nn::position_score_bias(k, rel.get(), /*nhead=*/4, T, T);
//
// The six schemes act in three different places:
//   none        nothing: attention is permutation-equivariant, order is invisible
//   learned     a trained vector per absolute position, added to the token embeddings
//   sinusoidal  the fixed sin/cos table of 2017, added to the token embeddings
//   rope        queries and keys rotated by their position inside self-attention
//   alibi       a fixed -slope_h * distance added to the attention scores
//   t5_bias     a trained scalar per (distance bucket, head) added to the attention scores
// The last two are additive score biases: a model computes the bias once per forward pass and
// hands it to every self-attention layer (AttentionMasks::bias), as T5 shares one table per stack.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autograd/var.h"

namespace attn::nn {

class RelativePositionBias;

enum class PositionKind { kNone, kLearned, kSinusoidal, kRope, kAlibi, kT5Bias };

// "none", "learned", "sinusoidal", "rope", "alibi", "t5_bias" (the order of the enum).
const std::vector<std::string>& position_kind_names();
std::string position_kind_name(PositionKind kind);
// Throws attn::UsageError naming `what` (e.g. "--positional") and listing the choices.
PositionKind position_kind_from_name(const std::string& name,
                                     const std::string& what = "positional");

// learned and sinusoidal: a table added to the token embeddings.
bool adds_to_embeddings(PositionKind kind);

// The additive score bias (1, nhead, tq, tk) of alibi (fixed) or t5_bias (from `t5`, which must
// then be given); nullopt for every other kind. The queries are the last tq of the tk positions,
// so tq < tk is a decoding step with a KV cache.
std::optional<Var> position_score_bias(
    PositionKind kind, const RelativePositionBias* t5, int64_t nhead, int64_t tq, int64_t tk);

}  // namespace attn::nn
