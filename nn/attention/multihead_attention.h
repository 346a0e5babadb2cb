// Multi-head attention for self and cross attention, PyTorch's nn.MultiheadAttention, plus
// grouped-query / multi-query heads, a KV cache and an optional rotary position hook.
//
//   attn::Generator gen(0);
//   attn::nn::MultiheadAttention mha(/*embed_dim=*/64, /*num_heads=*/8, gen);
//   auto a = mha.forward(x, x, x);                 // self-attention, x (B,T,64)
//   a.out;                                         // (B,T,64)
//   a.weights;                                     // (B,8,T,T) per head, for heatmaps
//   auto c = mha.forward(y, memory, memory, {.key_padding_mask = src_pad});  // cross-attention
//
//   MultiheadAttentionOptions o;  o.n_kv_heads = 2;  o.rope = RopeStyle::kRotateHalf;
//   MultiheadAttention gqa(64, 8, gen, o);           // 8 query heads share 2 key/value heads
//   KVCache cache;                                   // incremental decoding:
//   gqa.forward(prompt, prompt, prompt, {.causal = true}, &cache);   // fills the cache
//   gqa.forward(next, next, next, {.causal = true}, &cache);         // one new token (B,1,64)
//
//   mha.set_head_mask(Tensor::from_vector({1, 0, 1, 1, 1, 1, 1, 1}));  // head 2 removed
//   mha.set_head_mask(std::nullopt);                                    // all heads again
//   mha.set_weights_hook([](const Var& w, const Var& v) { return shuffled(w); });  // yours
//                                        // every head's output from the weights it returns
//
// Per head h (D = E/H): head_h = softmax(Q_h K_h^T / sqrt(D)) V_h, and the heads are concatenated
// and mixed by out_proj: out = concat(m_1 head_1, ..., m_H head_H) W_O^T + b_O, where the head
// mask m is 1 for every head unless set_head_mask gives other factors (m_h = 0 ablates head h:
// its values never reach the output, and no gradient flows into its Q, K, V rows). Dropout
// (training only) acts on the attention weights, as in PyTorch.
//
// Parameter names. n_kv_heads == num_heads (ordinary MHA) uses PyTorch's names and layout, so a
// state_dict of nn.MultiheadAttention(E, H, bias=..., batch_first=True) loads directly:
//   in_proj_weight (3E,E) = [W_q; W_k; W_v],  in_proj_bias (3E),  out_proj.weight (E,E),
//   out_proj.bias (E).
// Grouped/multi-query heads (n_kv_heads < num_heads), or separate_projections = true, use
//   q_proj.{weight,bias} (E,E), k_proj / v_proj (n_kv_heads*D, E), out_proj (E,E)
// (docs/checkpoint-format.md). With score = kAdditive there is one more parameter,
//   additive_v (H,D), U(-1/sqrt(D), 1/sqrt(D)) (nn.Linear(D, 1)'s bound)
//   (inside nn::Transformer the xavier pass redraws it, as every matrix).
// Initialisation: the projection weights are U(-b, b) with
// b = sqrt(6 / (E + 3E)) either way (PyTorch's xavier_uniform_ of the packed (3E,E) matrix),
// the projection biases 0, out_proj.weight nn.Linear's default and out_proj.bias 0.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "autograd/generator.h"
#include "nn/attention/additive_attention.h"
#include "nn/attention/sdpa.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/positional/rope.h"

namespace attn::nn {

struct MultiheadAttentionOptions {
  int64_t n_kv_heads = 0;   // 0: = num_heads (MHA); 1: MQA; otherwise GQA (divides num_heads)
  bool bias = true;         // biases of the four projections
  double dropout = 0.0;     // on the attention weights, in training
  bool batch_first = true;  // false: inputs and outputs are (T,B,E) as PyTorch's default
  bool separate_projections = false;  // q_proj/k_proj/v_proj even when n_kv_heads == num_heads
  // Rotary positions: when set, q and k are rotated (after the projections, before the scores)
  // by nn::apply_rope at their absolute positions (cache length + t). For self-attention.
  std::optional<RopeStyle> rope;
  double rope_base = 10000.0;
  bool scale = true;  // false: no 1/sqrt(D) on the scores (the scaling experiment)
  // kAdditive: Bahdanau's score w_h^T tanh(q_i + k_j) per head instead of q_i . k_j / sqrt(D)
  // (nn/attention/additive_attention.h), with one more parameter additive_v (H,D); needs
  // n_kv_heads == num_heads and always takes the unfused path (scale is then not used).
  AttentionScore score = AttentionScore::kScaledDot;
};

// Keys and values of earlier steps, per layer, for incremental decoding.
struct KVCache {
  Var k, v;  // (B, Hkv, T, D) once filled
  bool filled = false;
  // Cross-attention: the keys/values come from the fixed encoder memory, so they are computed on
  // the first call and reused afterwards (the key/value arguments are then ignored).
  bool fixed = false;

  int64_t length() const { return filled ? k.size(2) : 0; }
  void clear() { k = Var(), v = Var(), filled = false; }
};

class MultiheadAttention : public Module {
 public:
  // dropout_gen: the model's dropout generator (needed when options.dropout > 0).
  MultiheadAttention(int64_t embed_dim,
                     int64_t num_heads,
                     Generator& gen,
                     const MultiheadAttentionOptions& options = {},
                     std::shared_ptr<Generator> dropout_gen = nullptr);

  // query (B,Tq,E), key (B,Tk,E), value (B,Tk,E) (or (T,B,E) when !batch_first, or unbatched
  // (T,E)) -> out like query, weights (B,H,Tq,Tk). With a cache, the new keys/values are appended
  // to it first and the queries attend over the whole cache; masks then describe all Tk keys.
  AttentionOutput forward(const Var& query,
                          const Var& key,
                          const Var& value,
                          const AttentionMasks& masks = {},
                          KVCache* cache = nullptr);

  // Head ablation: multiplies head h's output by mask[h] before out_proj (0 removes the head,
  // 1 keeps it). mask (H); std::nullopt: every head at 1. A mask of the wrong shape throws
  // attn::Error naming both shapes.
  void set_head_mask(std::optional<Tensor> mask);
  const std::optional<Tensor>& head_mask() const { return head_mask_; }

  // Intervention on the attention weights ("is attention an explanation?"): when set, every
  // forward computes the weights w (B,H,Tq,Tk) as usual, calls hook(w, v) with the values
  // v (B,H,Tk,D), and uses the weights it returns (same shape) instead: head_h = hook(w)_h v_h.
  // Hidden keys have weight exactly 0 in w; keeping them at 0 is the hook's job. The call takes
  // the unfused path (the fused kernel never exposes w separately) and needs n_kv_heads ==
  // num_heads. last_weights() keeps the original w; dropout (training) is not applied to the
  // returned weights. An empty function removes the hook.
  using WeightsHook = std::function<Var(const Var& weights, const Var& values)>;
  void set_weights_hook(WeightsHook hook);

  // The weights of the last forward call, (B,H,Tq,Tk), for plots.
  const Tensor& last_weights() const { return last_weights_; }

  int64_t embed_dim() const { return e_; }
  int64_t num_heads() const { return h_; }
  int64_t n_kv_heads() const { return hkv_; }
  int64_t head_dim() const { return e_ / h_; }
  bool packed() const { return packed_; }
  const MultiheadAttentionOptions& options() const { return opt_; }

  // packed (PyTorch) layout:
  Var in_proj_weight, in_proj_bias;
  // separate layout:
  std::shared_ptr<Linear> q_proj, k_proj, v_proj;
  std::shared_ptr<Linear> out_proj;
  // score = kAdditive only: w (H,D), the vector each head's tanh(q + k) is projected on.
  Var additive_v;

 private:
  // A projection's output (B,T,C) and the column where its part starts: q, k and v may share
  // one packed (B,T,3E) output, which the head split reads in place.
  struct Projected {
    Var x;
    int64_t start = 0;
  };
  // Projected q (B,Tq,E), k and v (B,Tk,Hkv*D), batch first.
  void project(const Var& query,
               const Var& key,
               const Var& value,
               bool need_kv,
               Projected& q,
               Projected& k,
               Projected& v) const;
  // In fast mode the fused kernel (autograd's fused_attention: the heads read in place, no head
  // split or merge; dropout of the weights applied inside it) serves every call without a cache,
  // rotary positions or a mask other than causal; the rest, and every call in reference mode
  // (autograd/mode.h), take head_slice + scaled_dot_product_attention.
  bool fusable(const AttentionMasks& masks, int64_t tq, int64_t tk) const;
  AttentionOutput fused_heads(const Projected& q,
                              const Projected& k,
                              const Projected& v,
                              bool causal) const;
  // out (B,Tq,E) with the heads merged, and the weights.
  AttentionOutput split_heads_attention(const Projected& q,
                                        const Projected& k,
                                        const Projected& v,
                                        const AttentionMasks& masks,
                                        KVCache* cache);

  int64_t e_, h_, hkv_;
  bool packed_;
  MultiheadAttentionOptions opt_;
  std::shared_ptr<Generator> dropout_gen_;
  Tensor last_weights_;
  WeightsHook weights_hook_;
  std::optional<Tensor> head_mask_;  // (H)
  Tensor head_columns_;              // (E): mask[h] repeated over head h's D columns
};

}  // namespace attn::nn
