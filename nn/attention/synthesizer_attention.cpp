#include "nn/attention/synthesizer_attention.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/attention/sdpa.h"

namespace attn::nn {

namespace {

void check_shape(const char* who, int64_t d_model, int64_t nhead, int64_t max_len) {
  if (nhead < 1 || d_model % nhead != 0 || max_len < 1)
    throw Error(fmt::format("{}: nhead {} must divide d_model {} and max_len {} must be >= 1", who,
                            nhead, d_model, max_len));
}

void check_input(const char* who, const Var& x, int64_t d_model, int64_t max_len) {
  if (x.rank() != 3 || x.size(2) != d_model || x.size(1) > max_len)
    throw Error(fmt::format("{}: expected x (B,T,{}) with T <= max_len {}, got {}", who, d_model,
                            max_len, shape_str(x.shape())));
}

// Softmax over the last axis of scores (...,T,T), hiding j > i when causal.
Var synthesized_weights(const Var& scores, bool causal) {
  const int64_t t = scores.size(scores.rank() - 1);
  if (!causal) return softmax(scores);
  return masked_weights(scores,
                        combine_masks(AttentionMasks{.causal = true}, 1, 1, t, t)->reshape({t, t}));
}

}  // namespace

DenseSynthesizer::DenseSynthesizer(
    int64_t d_model, int64_t nhead, int64_t max_len, Generator& gen, bool causal, bool bias)
    : Module("DenseSynthesizer"),
      d_model_(d_model),
      nhead_(nhead),
      max_len_(max_len),
      causal_(causal) {
  check_shape("DenseSynthesizer", d_model, nhead, max_len);
  w1 = register_module("w1", std::make_shared<Linear>(d_model, d_model, bias, gen));
  w2 = register_module("w2", std::make_shared<Linear>(d_model, nhead * max_len, bias, gen));
  v_proj = register_module("v_proj", std::make_shared<Linear>(d_model, d_model, bias, gen));
  out_proj = register_module("out_proj", std::make_shared<Linear>(d_model, d_model, bias, gen));
}

Var DenseSynthesizer::weights(const Var& x) const {
  check_input("DenseSynthesizer", x, d_model_, max_len_);
  const int64_t b = x.size(0), t = x.size(1);
  const Var s = reshape(w2->forward(relu(w1->forward(x))), {b, t, nhead_, max_len_});
  // (B,T,H,max_len) -> (B,H,T,max_len), then only the first T columns: the positions there are.
  return synthesized_weights(slice(permute(s, {0, 2, 1, 3}), 3, 0, t), causal_);
}

Var DenseSynthesizer::forward(const Var& x) const {
  const Var a = weights(x);                               // (B,H,T,T)
  const Var v = split_heads(v_proj->forward(x), nhead_);  // (B,H,T,Dh)
  return out_proj->forward(merge_heads(matmul(a, v)));
}

RandomSynthesizer::RandomSynthesizer(int64_t d_model,
                                     int64_t nhead,
                                     int64_t max_len,
                                     Generator& gen,
                                     bool causal,
                                     bool trainable,
                                     bool bias)
    : Module("RandomSynthesizer"),
      d_model_(d_model),
      nhead_(nhead),
      max_len_(max_len),
      causal_(causal) {
  check_shape("RandomSynthesizer", d_model, nhead, max_len);
  v_proj = register_module("v_proj", std::make_shared<Linear>(d_model, d_model, bias, gen));
  out_proj = register_module("out_proj", std::make_shared<Linear>(d_model, d_model, bias, gen));
  Tensor init = Tensor::randn({nhead, max_len, max_len}, gen);
  scores = trainable ? register_parameter("scores", std::move(init))
                     : Var::constant(register_buffer("scores", std::move(init)));
}

Var RandomSynthesizer::weights(int64_t t) const {
  return synthesized_weights(slice(slice(scores, 1, 0, t), 2, 0, t), causal_);  // (H,T,T)
}

Var RandomSynthesizer::forward(const Var& x) const {
  check_input("RandomSynthesizer", x, d_model_, max_len_);
  const int64_t b = x.size(0), t = x.size(1), h = nhead_, dh = d_model_ / nhead_;
  // One (T,T) matrix per head for the whole batch: move the batch next to the channels,
  // (B,H,T,Dh) -> (H,T,B Dh), so each head is one GEMM, and back.
  const Var v = split_heads(v_proj->forward(x), h);
  const Var vh = reshape(permute(v, {1, 2, 0, 3}), {h, t, b * dh});
  const Var y = permute(reshape(matmul(weights(t), vh), {h, t, b, dh}), {2, 0, 1, 3});
  return out_proj->forward(merge_heads(y));
}

}  // namespace attn::nn
