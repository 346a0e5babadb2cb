#include "nn/attention/sdpa.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/mode.h"

namespace attn::nn {

namespace {

// The 4-D view (B|1, H|1, Tq, Tk) of a boolean attn_mask given in any accepted shape.
Tensor attn_mask_4d(const Tensor& m, int64_t b, int64_t h, int64_t tq, int64_t tk) {
  const Shape& s = m.shape();
  if (s.size() == 2 && s[0] == tq && s[1] == tk) return m.reshape({1, 1, tq, tk});
  if (s.size() == 3 && s[0] == b * h && s[1] == tq && s[2] == tk)
    return m.reshape({b, h, tq, tk});  // PyTorch's (B*H, Tq, Tk), head fastest
  if (s.size() == 4 && (s[0] == 1 || s[0] == b) && (s[1] == 1 || s[1] == h) && s[2] == tq &&
      s[3] == tk)
    return m;
  throw Error(
      fmt::format("attention: attn_mask {} fits none of ({},{}), ({},{},{}) or (B|1,H|1,Tq,Tk) = "
                  "({}|1,{}|1,{},{})",
                  shape_str(s), tq, tk, b * h, tq, tk, b, h, tq, tk));
}

}  // namespace

std::optional<Tensor> combine_masks(
    const AttentionMasks& masks, int64_t batch, int64_t heads, int64_t tq, int64_t tk) {
  const auto& kpm = masks.key_padding_mask;
  std::optional<Tensor> am;
  if (masks.attn_mask) am = attn_mask_4d(*masks.attn_mask, batch, heads, tq, tk);
  if (!kpm && !am && !masks.causal) return std::nullopt;
  if (kpm && kpm->shape() != Shape{batch, tk})
    throw Error(fmt::format("attention: key_padding_mask must be (B,Tk) = ({},{}), got {}", batch,
                            tk, shape_str(kpm->shape())));
  if (masks.causal && tq > tk)
    throw Error(fmt::format("attention: a causal mask needs Tq <= Tk, got Tq={} Tk={}", tq, tk));
  const int64_t mb = (kpm || (am && am->size(0) > 1)) ? batch : 1;
  const int64_t mh = (am && am->size(1) > 1) ? heads : 1;
  Tensor out({mb, mh, tq, tk});
  const int64_t offset = tk - tq;  // queries are the last tq positions
  for (int64_t b = 0; b < mb; ++b)
    for (int64_t h = 0; h < mh; ++h)
      for (int64_t i = 0; i < tq; ++i) {
        real* row = out.data() + ((b * mh + h) * tq + i) * tk;
        const real* arow =
            am ? am->data() +
                     (((am->size(0) > 1 ? b : 0) * am->size(1) + (am->size(1) > 1 ? h : 0)) * tq +
                      i) *
                         tk
               : nullptr;
        for (int64_t j = 0; j < tk; ++j) {
          bool hidden = masks.causal && j > i + offset;
          if (kpm && (*kpm)[b * tk + j] != 0) hidden = true;
          if (arow && arow[j] != 0) hidden = true;
          row[j] = hidden ? 1 : 0;
        }
      }
  return out;
}

Var attention_dropout(const Var& weights, const SdpaOptions& opt) {
  if (!opt.training || opt.dropout_p <= 0) return weights;
  if (!opt.dropout_gen) throw Error("attention: dropout_p > 0 in training needs a dropout_gen");
  return dropout(weights, static_cast<real>(opt.dropout_p), *opt.dropout_gen, true);
}

Var masked_weights(const Var& scores, const Tensor& hidden) {
  if (reference_mode())
    return softmax(masked_fill(scores, hidden, std::numeric_limits<real>::lowest()));
  return masked_softmax(scores, hidden);
}

Var split_heads(const Var& x, int64_t heads) {
  if (x.rank() != 3 || x.size(2) % heads != 0)
    throw Error(fmt::format("split_heads: expected x (B,T,H*D) with H={}, got {}", heads,
                            shape_str(x.shape())));
  return head_slice(x, heads, 0, x.size(2));
}

Var merge_heads(const Var& x) {
  if (x.rank() != 4) throw Error("merge_heads: expected x (B,H,T,D), got " + shape_str(x.shape()));
  const int64_t b = x.size(0), h = x.size(1), t = x.size(2), d = x.size(3);
  return reshape(permute(x, {0, 2, 1, 3}), {b, t, h * d});
}

AttentionOutput scaled_dot_product_attention(const Var& q,
                                             const Var& k,
                                             const Var& v,
                                             const SdpaOptions& opt) {
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
    throw Error(
        fmt::format("scaled_dot_product_attention: expected q (B,H,Tq,D), k (B,Hkv,Tk,D), "
                    "v (B,Hkv,Tk,Dv); got q {} k {} v {}",
                    shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape())));
  const int64_t b = q.size(0), h = q.size(1), tq = q.size(2), d = q.size(3);
  const int64_t hkv = k.size(1), tk = k.size(2), dv = v.size(3);
  if (k.size(0) != b || v.size(0) != b || k.size(3) != d || v.size(1) != hkv || v.size(2) != tk ||
      hkv == 0 || h % hkv != 0)
    throw Error(fmt::format(
        "scaled_dot_product_attention: shapes do not fit: q {} k {} v {} (need equal B, equal D "
        "for q and k, equal Tk for k and v, and H a multiple of Hkv)",
        shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape())));
  const int64_t g = h / hkv;  // query heads per key/value head

  // scores (B,H,Tq,Tk) = s q k^T with s = 1/sqrt(D) (or 1), grouped heads folded into the rows
  // of one GEMM per key head.
  const real s = opt.scale ? static_cast<real>(1.0 / std::sqrt(double(d))) : real(1);
  const AttentionMasks& m = opt.masks;
  const bool reference = reference_mode();
  // Fast path, no mask or a causal mask alone (self-attention, the decoder's causal
  // self-attention): the weights come from one fused op (scores and softmax per block of rows)
  // and the output from tril_matmul; causal, both skip the hidden triangle instead of computing
  // it and masking it away (a diagonal at Tk: nothing hidden, plain GEMMs). Grouped heads need no
  // reshape: both ops read key head h / g for query head h.
  const bool fused =
      !reference && !m.key_padding_mask && !m.attn_mask && !m.bias && (!m.causal || tq <= tk);
  if (fused) {
    Var weights = attention_weights(q, k, s, m.causal);
    const int64_t diagonal = m.causal ? tk - tq : tk;
    return {tril_matmul(attention_dropout(weights, opt), v, diagonal), weights};
  }
  // The reference path (and the fast path's general case) op by op:
  //   scores = (q k^T) * s [+ bias], hidden scores filled, softmax, dropout, weights v.
  // The fast path folds s into the GEMM (alpha) and the fill into masked_softmax.
  const real alpha = reference ? real(1) : s;
  Var scores = g == 1 ? matmul(q, k, false, true, alpha)
                      : reshape(matmul(reshape(q, {b, hkv, g * tq, d}), k, false, true, alpha),
                                {b, h, tq, tk});
  if (reference && opt.scale) scores = mul_scalar(scores, s);
  if (opt.masks.bias) scores = add(scores, *opt.masks.bias);
  const std::optional<Tensor> hidden = combine_masks(opt.masks, b, h, tq, tk);
  Var weights = hidden ? masked_weights(scores, *hidden) : softmax(scores);  // (B,H,Tq,Tk)

  const Var mixed = attention_dropout(weights, opt);
  // out (B,H,Tq,Dv) = weights v, grouped the same way.
  Var out = g == 1 ? matmul(mixed, v)
                   : reshape(matmul(reshape(mixed, {b, hkv, g * tq, tk}), v), {b, h, tq, dv});
  return {out, weights};
}

}  // namespace attn::nn
