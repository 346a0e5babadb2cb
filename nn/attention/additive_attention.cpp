#include "nn/attention/additive_attention.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

AttentionScore attention_score_from_name(const std::string& name, const char* flag) {
  if (name == "dot") return AttentionScore::kScaledDot;
  if (name == "additive") return AttentionScore::kAdditive;
  throw UsageError(fmt::format("{}: unknown attention score '{}' (dot or additive)", flag, name));
}

const char* attention_score_name(AttentionScore score) {
  return score == AttentionScore::kAdditive ? "additive" : "dot";
}

Var additive_scores(const Var& q, const Var& k, const Var& w) {
  if (q.rank() != 4 || k.rank() != 4 || w.rank() != 2 || k.size(0) != q.size(0) ||
      k.size(1) != q.size(1) || k.size(3) != q.size(3) || w.size(0) != q.size(1) ||
      w.size(1) != q.size(3))
    throw Error(fmt::format(
        "additive_scores: expected q (B,H,Tq,D), k (B,H,Tk,D), w (H,D); got q {} k {} w {}",
        shape_str(q.shape()), shape_str(k.shape()), shape_str(w.shape())));
  const int64_t b = q.size(0), h = q.size(1), tq = q.size(2), tk = k.size(2), d = q.size(3);
  // Every pair (i,j) gets the D-vector q_i + k_j: the broadcast of (..,Tq,1,D) and (..,1,Tk,D).
  const Var pairs = add(reshape(q, {b * h, tq, 1, d}), reshape(k, {b * h, 1, tk, d}));
  const Var hidden = tanh(pairs);  // (B*H,Tq,Tk,D): the tensor the dot product never builds
  // w_h as a column per (batch, head), (B,H,D,1): matmul pairs batch axes exactly, so w (1,H,D,1)
  // is broadcast over the batch by a product with ones (its gradient sums back over B).
  const Var w_col = mul(Var::constant(Tensor::ones({b, h, d, 1})), reshape(w, {1, h, d, 1}));
  // s = tanh(q_i + k_j) . w_h for every pair: (B,H,Tq*Tk,D) (B,H,D,1) -> (B,H,Tq*Tk,1).
  const Var s = matmul(reshape(hidden, {b, h, tq * tk, d}), w_col);
  return reshape(s, {b, h, tq, tk});
}

AttentionOutput additive_attention(
    const Var& q, const Var& k, const Var& v, const Var& w, const SdpaOptions& opt) {
  if (v.rank() != 4 || v.size(0) != k.size(0) || v.size(1) != k.size(1) || v.size(2) != k.size(2))
    throw Error(fmt::format("additive_attention: v must be (B,H,Tk,Dv) with k {}, got {}",
                            shape_str(k.shape()), shape_str(v.shape())));
  const int64_t b = q.size(0), h = q.size(1), tq = q.size(2), tk = k.size(2);
  Var scores = additive_scores(q, k, w);
  if (opt.masks.bias) scores = add(scores, *opt.masks.bias);
  const std::optional<Tensor> hidden = combine_masks(opt.masks, b, h, tq, tk);
  const Var weights = hidden ? masked_weights(scores, *hidden) : softmax(scores);
  return {matmul(attention_dropout(weights, opt), v), weights};
}

}  // namespace attn::nn
