#include "nn/attention/lsh_attention.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/attention/sdpa.h"

namespace attn::nn {

namespace {

// The score that replaces a query's own: far below any real score, far above a hidden one, so
// a query that sees only itself still gets weight 1 (the paper's -1e5).
constexpr real kSelfScore = -1e5f;

// rows (N,D) gathered by the whole-number ids (M) -> (M,D); backward scatter-adds into rows.
// The embedding op is exactly a row gather, so the permutations need no new op.
Var gather_rows(const Var& rows, const Tensor& ids) {
  return embedding(rows, ids);
}

// z (R, C*chunk, D) sorted -> (R, C, 2 chunk, D): each chunk's keys preceded by the previous
// chunk's (chunk 0 gets a copy of itself in front, hidden by the mask).
Var with_previous_chunk(const Var& z) {
  const int64_t c = z.size(1);
  const Var prev = c > 1 ? concat({slice(z, 1, 0, 1), slice(z, 1, 0, c - 1)}, 1) : z;
  return concat({prev, z}, 2);
}

}  // namespace

LshLayout lsh_layout(const Tensor& qk, const Tensor& rotations, int64_t chunk) {
  LshLayout l;
  l.rows = qk.size(0), l.t = qk.size(1), l.chunk = chunk;
  l.n_chunks = (l.t + chunk - 1) / chunk;
  const int64_t d = qk.size(2), half = rotations.size(1);
  for (int64_t r = 0; r < l.rows; ++r) {
    std::vector<int64_t> bucket(static_cast<size_t>(l.t));
    for (int64_t t = 0; t < l.t; ++t) {
      // argmax over [xR, -xR]: the largest |x . R_c|, on the side of its sign.
      const real* x = qk.data() + (r * l.t + t) * d;
      int64_t best = 0;
      real best_v = -1;
      for (int64_t c = 0; c < half; ++c) {
        real p = 0;
        for (int64_t i = 0; i < d; ++i) p += x[i] * rotations[i * half + c];
        if (p > best_v) best_v = p, best = c;
        if (-p > best_v) best_v = -p, best = half + c;
      }
      bucket[static_cast<size_t>(t)] = best;
    }
    std::vector<int64_t> order(static_cast<size_t>(l.t));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return bucket[a] < bucket[b]; });
    std::vector<int64_t> slot(static_cast<size_t>(l.t));
    for (int64_t s = 0; s < l.t; ++s) slot[static_cast<size_t>(order[s])] = s;
    l.order.push_back(std::move(order));
    l.slot_of.push_back(std::move(slot));
    l.bucket.push_back(std::move(bucket));
  }
  return l;
}

LshAttention::LshAttention(int64_t d_model,
                           int64_t nhead,
                           int64_t n_buckets,
                           int64_t chunk,
                           Generator& gen,
                           bool causal,
                           bool bias)
    : Module("LshAttention"),
      d_model_(d_model),
      nhead_(nhead),
      n_buckets_(n_buckets),
      chunk_(chunk),
      causal_(causal) {
  if (nhead < 1 || d_model % nhead != 0)
    throw Error(fmt::format("LshAttention: nhead {} must divide d_model {}", nhead, d_model));
  if (n_buckets < 2 || n_buckets % 2 != 0 || chunk < 1)
    throw Error(
        fmt::format("LshAttention: n_buckets must be even and >= 2 and chunk >= 1, got {} and {}",
                    n_buckets, chunk));
  qk_proj = register_module("qk_proj", std::make_shared<Linear>(d_model, d_model, bias, gen));
  v_proj = register_module("v_proj", std::make_shared<Linear>(d_model, d_model, bias, gen));
  out_proj = register_module("out_proj", std::make_shared<Linear>(d_model, d_model, bias, gen));
  rotations_ = register_buffer("rotations", Tensor::randn({d_model / nhead, n_buckets / 2}, gen));
}

Var LshAttention::forward(const Var& x) const {
  if (x.rank() != 3 || x.size(2) != d_model_)
    throw Error(
        fmt::format("LshAttention: expected x (B,T,{}), got {}", d_model_, shape_str(x.shape())));
  const int64_t b = x.size(0), t = x.size(1), h = nhead_, dh = d_model_ / nhead_;
  const int64_t rows = b * h;
  const Var qk = reshape(split_heads(qk_proj->forward(x), h), {rows * t, dh});  // (BHT,Dh)
  const Var v = reshape(split_heads(v_proj->forward(x), h), {rows * t, dh});
  last_ = lsh_layout(reshape(qk, {rows, t, dh}).value(), rotations_, chunk_);
  const LshLayout& l = last_;
  const int64_t c = chunk_, nc = l.n_chunks, slots = nc * c;

  // Gather ids into the sorted, padded order (pad slots read row 0 and are hidden as keys) and
  // back: sorted[r, s] = x[r, order[r][s]], y[r, t] = out[r, slot_of[r][t]].
  Tensor sort_ids({rows * slots}), unsort_ids({rows * t});
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t s = 0; s < slots; ++s)
      sort_ids[r * slots + s] = static_cast<real>(r * t + (s < t ? l.order[r][s] : 0));
    for (int64_t p = 0; p < t; ++p)
      unsort_ids[r * t + p] = static_cast<real>(r * slots + l.slot_of[r][p]);
  }
  // Which (query slot, key slot) pairs are hidden, and where a query meets itself.
  Tensor hidden({rows, nc, c, 2 * c}), self({rows, nc, c, 2 * c});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t ci = 0; ci < nc; ++ci)
      for (int64_t i = 0; i < c; ++i)
        for (int64_t j = 0; j < 2 * c; ++j) {
          const int64_t at = ((r * nc + ci) * c + i) * 2 * c + j;
          const int64_t qs = ci * c + i, ks = (ci - 1) * c + j;  // ks: j < c is the previous chunk
          bool hide = ks < 0 || ks >= t, is_self = false;
          if (!hide && qs < t) {
            const int64_t qp = l.order[r][qs], kp = l.order[r][ks];
            hide = causal_ && kp > qp;
            is_self = kp == qp;
          }
          hidden[at] = hide ? 1 : 0;
          self[at] = is_self ? 1 : 0;
        }

  // Keys are the unit-length queries: k = qk / |qk|.
  const Var norm = sqrt(add_scalar(sum(mul(qk, qk), 1, /*keepdim=*/true), 1e-6f));
  const Var q_s = reshape(gather_rows(qk, sort_ids), {rows, nc, c, dh});
  const Var k_s =
      with_previous_chunk(reshape(gather_rows(div(qk, norm), sort_ids), {rows, nc, c, dh}));
  const Var v_s = with_previous_chunk(reshape(gather_rows(v, sort_ids), {rows, nc, c, dh}));
  const real scale = static_cast<real>(1.0 / std::sqrt(static_cast<double>(dh)));
  const Var scores = masked_fill(matmul(q_s, k_s, false, true, scale), self, kSelfScore);
  const Var y_s = matmul(masked_weights(scores, hidden), v_s);              // (rows,nc,c,Dh)
  const Var y = gather_rows(reshape(y_s, {rows * slots, dh}), unsort_ids);  // (BHT,Dh)
  return out_proj->forward(merge_heads(reshape(y, {b, h, t, dh})));
}

}  // namespace attn::nn
