#include "nn/attention/multihead_attention.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/mode.h"
#include "autograd/ops/fused/fused_dropout.h"
#include "nn/init.h"

namespace attn::nn {

namespace {

// Rows [lo, hi) of a packed (3E, E) weight (or entries of a (3E) bias): a slice on the tape, so
// the gradient lands in the right block of in_proj_weight.
Var rows(const Var& w, int64_t lo, int64_t hi) {
  return slice(w, 0, lo, hi);
}

}  // namespace

MultiheadAttention::MultiheadAttention(int64_t embed_dim,
                                       int64_t num_heads,
                                       Generator& gen,
                                       const MultiheadAttentionOptions& options,
                                       std::shared_ptr<Generator> dropout_gen)
    : Module("MultiheadAttention"),
      e_(embed_dim),
      h_(num_heads),
      hkv_(options.n_kv_heads == 0 ? num_heads : options.n_kv_heads),
      opt_(options),
      dropout_gen_(std::move(dropout_gen)) {
  if (e_ <= 0 || h_ <= 0 || e_ % h_ != 0)
    throw Error(fmt::format(
        "MultiheadAttention: embed_dim ({}) must be a positive multiple of num_heads ({})", e_,
        h_));
  if (hkv_ <= 0 || h_ % hkv_ != 0)
    throw Error(
        fmt::format("MultiheadAttention: n_kv_heads ({}) must divide num_heads ({})", hkv_, h_));
  if (opt_.dropout < 0 || opt_.dropout >= 1)
    throw Error(fmt::format("MultiheadAttention: dropout must be in [0, 1), got {}", opt_.dropout));
  if (opt_.dropout > 0 && !dropout_gen_)
    throw Error("MultiheadAttention: dropout > 0 needs the model's dropout generator");
  if (opt_.rope && head_dim() % 2 != 0)
    throw Error(fmt::format("MultiheadAttention: rotary positions need an even head_dim, got {}",
                            head_dim()));
  if (opt_.score == AttentionScore::kAdditive && hkv_ != h_)
    throw Error(fmt::format(
        "MultiheadAttention: additive scores need n_kv_heads == num_heads, got {} for {} heads",
        hkv_, h_));
  packed_ = hkv_ == h_ && !opt_.separate_projections;
  const int64_t kv_dim = hkv_ * head_dim();
  // xavier_uniform_ of the packed (3E, E) matrix: the bound PyTorch uses for every projection.
  const double bound = std::sqrt(6.0 / static_cast<double>(4 * e_));
  auto projection = [&](int64_t out) {
    Tensor w = Tensor::empty({out, e_});
    return init::uniform_(w, gen, -bound, bound);
  };
  if (packed_) {
    in_proj_weight = register_parameter("in_proj_weight", projection(3 * e_));
    if (opt_.bias) in_proj_bias = register_parameter("in_proj_bias", Tensor::zeros({3 * e_}));
  } else {
    auto make = [&](const char* name, int64_t out) {
      auto l = register_module(name, std::make_shared<Linear>(e_, out, opt_.bias, gen));
      l->weight.value().copy_from(projection(out));
      if (opt_.bias) l->bias.value().fill(0);
      return l;
    };
    q_proj = make("q_proj", e_);
    k_proj = make("k_proj", kv_dim);
    v_proj = make("v_proj", kv_dim);
  }
  out_proj = register_module("out_proj", std::make_shared<Linear>(e_, e_, opt_.bias, gen));
  if (opt_.bias) out_proj->bias.value().fill(0);
  if (opt_.score == AttentionScore::kAdditive) {
    const double v_bound = 1.0 / std::sqrt(static_cast<double>(head_dim()));
    Tensor w = Tensor::empty({h_, head_dim()});
    additive_v = register_parameter("additive_v", init::uniform_(w, gen, -v_bound, v_bound));
  }
}

void MultiheadAttention::project(const Var& query,
                                 const Var& key,
                                 const Var& value,
                                 bool need_kv,
                                 Projected& q,
                                 Projected& k,
                                 Projected& v) const {
  if (!packed_) {
    q = {q_proj->forward(query)};
    if (need_kv) k = {k_proj->forward(key)}, v = {v_proj->forward(value)};
    return;
  }
  auto bias_rows = [&](int64_t lo, int64_t hi) {
    return opt_.bias ? std::optional<Var>(rows(in_proj_bias, lo, hi)) : std::nullopt;
  };
  const int64_t e = e_;
  if (need_kv && query.same_node(key) && key.same_node(value)) {
    // Self-attention: one GEMM for all three projections; the head split reads its columns.
    Var qkv = affine(query, in_proj_weight,
                     opt_.bias ? std::optional<Var>(in_proj_bias) : std::nullopt);  // (B,T,3E)
    q = {qkv, 0}, k = {qkv, e}, v = {qkv, 2 * e};
    return;
  }
  q = {affine(query, rows(in_proj_weight, 0, e), bias_rows(0, e))};
  if (!need_kv) return;
  if (key.same_node(value)) {  // cross-attention over one memory: keys and values in one GEMM
    Var kv = affine(key, rows(in_proj_weight, e, 3 * e), bias_rows(e, 3 * e));  // (B,Tk,2E)
    k = {kv, 0}, v = {kv, e};
    return;
  }
  k = {affine(key, rows(in_proj_weight, e, 2 * e), bias_rows(e, 2 * e))};
  v = {affine(value, rows(in_proj_weight, 2 * e, 3 * e), bias_rows(2 * e, 3 * e))};
}

AttentionOutput MultiheadAttention::forward(const Var& query,
                                            const Var& key,
                                            const Var& value,
                                            const AttentionMasks& masks,
                                            KVCache* cache) {
  const bool reuse = cache && cache->fixed && cache->filled;
  // Bring every input to (B,T,E): unbatched (T,E) gets B = 1; (T,B,E) is permuted.
  const bool unbatched = query.rank() == 2;
  auto to_bte = [&](const Var& x, const char* what) {
    if (x.rank() != (unbatched ? 2 : 3) || x.shape().back() != e_)
      throw Error(fmt::format("MultiheadAttention(E={}): {} must be {} with E={}, got {}", e_, what,
                              unbatched          ? "(T,E)"
                              : opt_.batch_first ? "(B,T,E)"
                                                 : "(T,B,E)",
                              e_, shape_str(x.shape())));
    if (unbatched) return reshape(x, {1, x.size(0), e_});
    return opt_.batch_first ? x : permute(x, {1, 0, 2});
  };
  const Var qin = to_bte(query, "query");
  // Keep self-attention recognisable after the reshapes: same input node, same Var.
  const Var kin = reuse ? Var() : key.same_node(query) ? qin : to_bte(key, "key");
  const Var vin = reuse ? Var() : value.same_node(key) ? kin : to_bte(value, "value");

  Projected pq, pk, pv;
  project(qin, kin, vin, !reuse, pq, pk, pv);
  AttentionOutput a;
  if (!cache && fusable(masks, qin.size(1), kin.size(1)))
    a = fused_heads(pq, pk, pv, masks.causal);
  else
    a = split_heads_attention(pq, pk, pv, masks, cache);
  last_weights_ = a.weights.value();

  // (B,Tq,E) * (E): head h's D columns scaled by mask[h]; the gradient is masked the same way.
  const Var heads = head_mask_ ? mul(a.out, Var::constant(head_columns_)) : a.out;
  Var out = out_proj->forward(heads);  // (B,Tq,E)
  if (unbatched)
    out = reshape(out, {out.size(1), e_});
  else if (!opt_.batch_first)
    out = permute(out, {1, 0, 2});
  return {out, a.weights};
}

void MultiheadAttention::set_head_mask(std::optional<Tensor> mask) {
  if (mask && (mask->rank() != 1 || mask->size(0) != h_))
    throw Error(fmt::format("MultiheadAttention: head mask must be ({}) for {} heads, got {}", h_,
                            h_, shape_str(mask->shape())));
  head_mask_ = std::move(mask);
  if (!head_mask_) return;
  const int64_t d = head_dim();
  head_columns_ = Tensor::empty({e_});
  for (int64_t i = 0; i < e_; ++i) head_columns_[i] = (*head_mask_)[i / d];
}

void MultiheadAttention::set_weights_hook(WeightsHook hook) {
  if (hook && hkv_ != h_)
    throw Error(
        fmt::format("MultiheadAttention: a weights hook needs n_kv_heads == num_heads, got "
                    "{} key/value heads for {} heads",
                    hkv_, h_));
  weights_hook_ = std::move(hook);
}

bool MultiheadAttention::fusable(const AttentionMasks& masks, int64_t tq, int64_t tk) const {
  return !reference_mode() && opt_.score == AttentionScore::kScaledDot && !weights_hook_ &&
         !opt_.rope && !masks.key_padding_mask && !masks.attn_mask && !masks.bias &&
         (!masks.causal || tq <= tk);
}

AttentionOutput MultiheadAttention::fused_heads(const Projected& q,
                                                const Projected& k,
                                                const Projected& v,
                                                bool causal) const {
  const int64_t d = head_dim();
  FusedAttentionSpec spec{.heads = h_,
                          .kv_heads = hkv_,
                          .head_dim = d,
                          .v_head_dim = d,
                          .q_col = q.start,
                          .k_col = k.start,
                          .v_col = v.start,
                          .scale = opt_.scale ? static_cast<real>(1.0 / std::sqrt(double(d))) : 1,
                          .causal = causal};
  // Dropout of the weights inside the kernel: the same draw and mask as sdpa's dropout op.
  const bool dropout = opt_.dropout > 0 && is_training();
  FusedAttentionOutput f =
      fused_attention(q.x, k.x, v.x, spec,
                      {.p = dropout ? static_cast<real>(opt_.dropout) : real(0),
                       .gen = dropout ? dropout_gen_.get() : nullptr});
  return {f.out, f.weights};
}

AttentionOutput MultiheadAttention::split_heads_attention(const Projected& pq,
                                                          const Projected& pk,
                                                          const Projected& pv,
                                                          const AttentionMasks& masks,
                                                          KVCache* cache) {
  const bool reuse = cache && cache->fixed && cache->filled;
  const int64_t start = cache && !cache->fixed ? cache->length() : 0;
  const int64_t kv_dim = hkv_ * head_dim();
  Var q = head_slice(pq.x, h_, pq.start, pq.start + e_), k, v;  // (B,H,Tq,D)
  if (!reuse) {
    k = head_slice(pk.x, hkv_, pk.start, pk.start + kv_dim);  // (B,Hkv,Tk,D)
    v = head_slice(pv.x, hkv_, pv.start, pv.start + kv_dim);
    if (opt_.rope) k = apply_rope(k, start, *opt_.rope, opt_.rope_base);
  }
  if (opt_.rope) q = apply_rope(q, start, *opt_.rope, opt_.rope_base);

  if (cache) {
    if (reuse) {
      k = cache->k, v = cache->v;
    } else {
      if (cache->filled) {
        if (cache->k.size(0) != k.size(0))
          throw Error(fmt::format("MultiheadAttention: the KV cache holds batch {}, the input {}",
                                  cache->k.size(0), k.size(0)));
        k = concat({cache->k, k}, 2), v = concat({cache->v, v}, 2);
      }
      cache->k = k, cache->v = v, cache->filled = true;
    }
  }

  SdpaOptions so;
  so.masks = masks;
  so.scale = opt_.scale;
  so.dropout_p = opt_.dropout;
  so.dropout_gen = dropout_gen_.get();
  so.training = is_training();
  AttentionOutput a = opt_.score == AttentionScore::kAdditive
                          ? additive_attention(q, k, v, additive_v, so)
                          : scaled_dot_product_attention(q, k, v, so);
  if (weights_hook_) {
    const Var w = weights_hook_(a.weights, v);
    if (w.shape() != a.weights.shape())
      throw Error(fmt::format("MultiheadAttention: the weights hook returned {}, expected {}",
                              shape_str(w.shape()), shape_str(a.weights.shape())));
    a.out = matmul(w, v);  // (B,H,Tq,D): the heads recomputed from the chosen weights
  }
  return {merge_heads(a.out), a.weights};  // (B,Tq,E)
}

}  // namespace attn::nn
