// Scaled dot-product attention: softmax(q k^T / sqrt(d_k) + bias, masked) v, returning the
// output AND the attention weights (for heatmaps).
//
//   using namespace attn::nn;
//   SdpaOptions opt;
//   opt.masks.causal = true;                          // query i sees keys j <= i
//   opt.masks.key_padding_mask = pad;                 // (B,Tk), 1 = padding key (ignored)
//   AttentionOutput a = scaled_dot_product_attention(q, k, v, opt);
//   a.out;      // (B,H,Tq,Dv)
//   a.weights;  // (B,H,Tq,Tk), each row sums to 1 (before dropout)
//
// Shapes: q (B,H,Tq,D), k (B,Hkv,Tk,D), v (B,Hkv,Tk,Dv) with H a multiple of Hkv. Hkv = H is
// ordinary multi-head attention; Hkv < H is grouped-query attention (GQA; Hkv = 1 is multi-query,
// MQA): query head h reads key/value head h / (H/Hkv). The grouping costs no copy: the g = H/Hkv
// query heads sharing a key head are contiguous, so q reshapes to (B,Hkv,g*Tq,D) and one batched
// GEMM per key head computes all their scores.
//
// MASK CONVENTION (PyTorch's boolean masks in nn.MultiheadAttention / nn.Transformer):
// a mask holds 0/1 and 1 means NOT allowed. Every mask given is combined (a key is hidden if any
// mask hides it). The hidden scores become the lowest finite number before the softmax, so their
// weight is exactly 0 and they get no gradient. A query whose keys are ALL hidden attends
// uniformly to every key (PyTorch returns NaN there); avoid that, e.g. never pad a whole row.
// A float mask in PyTorch's sense (added to the scores) is `bias` here.
//
// TWO PATHS (autograd/mode.h). Reference mode: matmul(q, k^T) -> mul_scalar(1/sqrt(D)) -> add
// (bias) -> masked_fill (the lowest float, when anything is masked) -> softmax -> dropout ->
// matmul, one elementary op per step. Fast mode: with no mask, or a causal mask alone (no bias;
// GQA included), the weights come from the fused attention_weights op and the output from
// tril_matmul; a causal mask then never computes the hidden half, about 0.55-0.65x the time of
// unmasked attention (docs/performance.md, W6). Every other combination builds the full scores
// (the scale inside the GEMM) and one 0/1 mask (combine_masks) and runs masked_softmax.
#pragma once

#include <cstdint>
#include <optional>

#include "autograd/generator.h"
#include "autograd/var.h"

namespace attn::nn {

struct AttentionMasks {
  // (B, Tk): 1 = padding, no query attends to this key (PyTorch's key_padding_mask).
  std::optional<Tensor> key_padding_mask;
  // 1 = query i may not attend to key j (PyTorch's boolean attn_mask). Shapes: (Tq,Tk) for all
  // batches and heads, (B*H,Tq,Tk) as PyTorch's 3-D form, or (B|1, H|1, Tq, Tk).
  std::optional<Tensor> attn_mask;
  // Query i (the queries are the LAST Tq of the Tk positions) sees keys j <= i + Tk - Tq. With
  // Tq == Tk that is j <= i; with a KV cache (Tq = 1 new token) it is every cached key.
  bool causal = false;
  // Added to the scaled scores before masking: broadcastable to (B,H,Tq,Tk), e.g. (1,H,Tq,Tk) for
  // ALiBi or a learned relative bias (it is differentiable). PyTorch's float attn_mask.
  std::optional<Var> bias;
};

struct SdpaOptions {
  AttentionMasks masks;
  bool scale = true;  // false: scores are plain q.k (the scaling experiment)
  // Dropout on the attention weights (training only), drawn from dropout_gen.
  double dropout_p = 0.0;
  Generator* dropout_gen = nullptr;
  bool training = false;
};

struct AttentionOutput {
  Var out;      // (B,H,Tq,Dv) from sdpa; (B,Tq,E) from MultiheadAttention
  Var weights;  // (B,H,Tq,Tk): softmax rows before dropout (what a heatmap should show)
};

AttentionOutput scaled_dot_product_attention(const Var& q,
                                             const Var& k,
                                             const Var& v,
                                             const SdpaOptions& options = {});

// Every mask of `masks` (not the bias) folded into one 0/1 tensor (B|1, H|1, Tq, Tk), 1 = hidden;
// nullopt when nothing is masked. Checks every mask's shape, naming it in the error.
std::optional<Tensor> combine_masks(
    const AttentionMasks& masks, int64_t batch, int64_t heads, int64_t tq, int64_t tk);

// Dropout on the attention weights when options.training and dropout_p > 0 (drawn from
// dropout_gen); otherwise the weights as given.
Var attention_dropout(const Var& weights, const SdpaOptions& options);

// softmax over the last axis with the `hidden` (1) positions at weight 0: masked_fill with the
// lowest float then softmax (reference mode), or the fused masked_softmax (fast mode).
Var masked_weights(const Var& scores, const Tensor& hidden);

// (B,T,H*D) -> (B,H,T,D) and back: the head split of multi-head attention (one copy each).
Var split_heads(const Var& x, int64_t heads);
Var merge_heads(const Var& x);

}  // namespace attn::nn
