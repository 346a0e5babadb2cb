#include "nn/attention/dual_chunk_attention.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/attention/sdpa.h"
#include "nn/positional/rope.h"

namespace attn::nn {

namespace {

// The three position indices of a query at i (see the header).
int64_t intra_index(int64_t i, int64_t s) {
  return i % s;
}
int64_t successive_index(int64_t i, int64_t l, int64_t s) {
  return std::min(s + i % s, l - 1);
}

enum class Pair { kIntra, kSuccessive, kInter };
Pair pair_kind(int64_t i, int64_t j, int64_t s) {
  const int64_t gap = i / s - j / s;
  return gap == 0 ? Pair::kIntra : gap == 1 ? Pair::kSuccessive : Pair::kInter;
}

// (T,T) 0/1: 1 where key j is in the given relation to query i (i >= j).
Tensor pair_mask(int64_t t, int64_t s, Pair kind) {
  Tensor m({t, t});
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j <= i; ++j) m[i * t + j] = pair_kind(i, j, s) == kind ? 1 : 0;
  return m;
}

// (T,T), 1 above the diagonal: key j > i is hidden from query i.
Tensor causal_hidden(int64_t t) {
  return combine_masks(AttentionMasks{.causal = true}, 1, 1, t, t)->reshape({t, t});
}

}  // namespace

Var rope_at(const Var& x, const std::vector<int64_t>& positions, double base) {
  const int64_t d = x.size(x.rank() - 1), t = x.size(x.rank() - 2), half = d / 2;
  if (d % 2 != 0 || static_cast<int64_t>(positions.size()) != t)
    throw Error(
        fmt::format("rope_at: expected x (...,T,D), D even, and T positions; got x {} and "
                    "{} positions",
                    shape_str(x.shape()), positions.size()));
  Tensor cos({t, d}), sin({t, d});
  for (int64_t r = 0; r < t; ++r)
    for (int64_t i = 0; i < half; ++i) {
      const double angle =
          static_cast<double>(positions[r]) * std::pow(base, -2.0 * static_cast<double>(i) / d);
      cos[r * d + i] = cos[r * d + half + i] = static_cast<real>(std::cos(angle));
      sin[r * d + i] = sin[r * d + half + i] = static_cast<real>(std::sin(angle));
    }
  const int a = x.rank() - 1;
  const Var rotated = concat({neg(slice(x, a, half, d)), slice(x, a, 0, half)}, a);
  return add(mul(x, Var::constant(cos)), mul(rotated, Var::constant(sin)));
}

Tensor dual_chunk_distances(int64_t t, int64_t train_len, int64_t chunk) {
  Tensor m({t, t});
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      const int64_t k = j % chunk;
      switch (pair_kind(i, j, chunk)) {
        case Pair::kIntra:
          m[i * t + j] = static_cast<real>(intra_index(i, chunk) - k);
          break;
        case Pair::kSuccessive:
          m[i * t + j] = static_cast<real>(successive_index(i, train_len, chunk) - k);
          break;
        case Pair::kInter:
          m[i * t + j] = static_cast<real>(train_len - 1 - k);
          break;
      }
    }
  return m;
}

RopeAttention::RopeAttention(int64_t d_model,
                             int64_t nhead,
                             Generator& gen,
                             int64_t train_len,
                             int64_t chunk,
                             RopePositions positions,
                             bool bias)
    : ProjectedAttention("RopeAttention", d_model, nhead, gen, bias),
      train_len_(train_len),
      chunk_(chunk > 0 ? chunk : train_len / 2),
      positions_(positions) {
  if (head_dim() % 2 != 0)
    throw Error(fmt::format("RopeAttention: the head width {} must be even", head_dim()));
  if (chunk_ < 1 || chunk_ >= train_len)
    throw Error(
        fmt::format("RopeAttention: need 1 <= chunk < train_len, got chunk {} and "
                    "train_len {}",
                    chunk_, train_len));
}

Var RopeAttention::forward(const Var& x) const {
  const HeadsQKV a = project(x);  // (B,H,T,Dh)
  const int64_t t = x.size(1);
  const real scale = static_cast<real>(1.0 / std::sqrt(static_cast<double>(head_dim())));
  Var scores;
  if (positions_ == RopePositions::kPlain) {
    scores = matmul(apply_rope(a.q, 0, RopeStyle::kRotateHalf),
                    apply_rope(a.k, 0, RopeStyle::kRotateHalf), false, true, scale);
  } else {
    const int64_t s = chunk_, l = train_len_;
    std::vector<int64_t> key(t), intra(t), succ(t), inter(t, l - 1);
    for (int64_t i = 0; i < t; ++i) {
      key[i] = i % s;
      intra[i] = intra_index(i, s);
      succ[i] = successive_index(i, l, s);
    }
    const Var k = rope_at(a.k, key);
    const auto scores_at = [&](const std::vector<int64_t>& qpos) {
      return matmul(rope_at(a.q, qpos), k, false, true, scale);  // (B,H,T,T)
    };
    // Each (i, j) takes its score from the matrix of its relation; the rest are discarded.
    scores = where(pair_mask(t, s, Pair::kIntra), scores_at(intra),
                   where(pair_mask(t, s, Pair::kSuccessive), scores_at(succ), scores_at(inter)));
  }
  return combine(matmul(masked_weights(scores, causal_hidden(t)), a.v));
}

}  // namespace attn::nn
