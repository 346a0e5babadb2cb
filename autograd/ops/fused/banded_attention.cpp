// BandedAttentionOp: sliding-window attention that stores only the band of the score matrix.
//
// Query i sees the keys j = i - w + c for the slots c = 0 .. W-1, W = 2w+1 (causal: W = w+1, so
// j runs from i - w to i); slots whose j falls outside [0, T) are hidden (weight 0). Scores,
// weights and their gradients live in (batch, T, W) arrays: O(T w) memory and O(T w D) time,
// forward and backward, where masking a (T,T) matrix costs O(T^2) in both.
// Global tokens (Longformer): g positions whose query reads every key (a full row, kept in a
// (batch, g, T) array) and whose key every query reads (g extra slots per row, used when the band
// does not already hold that key); causal, only keys j <= i either way. O(T (w + g)) in all.
// Random links (BigBird, autograd/random_links.h): r more slots per ordinary row, each a key the
// row reads nowhere else (outside the band, not global, causal: in the past), listed per row;
// the key pass finds the rows that link to a key through an inverse list. O(T (w + g + r)).
//
// The band is computed a block of kBlockRows rows (or keys) at a time: the block's rows against
// every key their bands reach, as one small matrix product, of which the band is kept. That
// multiplies up to (kBlockRows + 2w) / (2w + 1) times the band's work, at the matrix kernels'
// rate instead of one short dot product per (row, key): measured in docs/performance.md (W9).
//
// Replaces: matmul(q, k^T) -> mul_scalar -> masked_fill(sliding_window_mask) -> softmax ->
// matmul (nn::SlidingWindowAttention's dense path, whose weights are zero outside the band);
// tests/nn/banded_attention_test.cpp shows the two agree in outputs and gradients. Gain:
// time and peak memory linear in T instead of quadratic (docs/performance.md, W9).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/vec_math.h"
#include "autograd/ops/fused/banded_links.h"

namespace attn {

namespace {

real band_dot(const real* a, const real* b, int64_t n) {
  real s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// y += alpha x
void axpy(real alpha, const real* x, real* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

}  // namespace

struct BandedAttentionOp final : Op {
  Tensor q, k, v;  // the inputs (shared storage, no copy)
  Tensor p;        // (batch, T, W + g + r): each ordinary row's band, global and link slots
  Tensor pg;       // (batch, g, T): the full rows of the g global queries
  std::vector<int64_t> globals;       // the global positions, sorted, distinct
  std::vector<int64_t> global_index;  // (T): m when position i is globals[m], else -1
  int64_t batch = 1, t_len = 0, d = 0, dv = 0, window = 0, width = 0, slots = 0, n_global = 0;
  RandomLinks links;  // (T, r) link keys per row, -1 = empty
  LinkedRows by_key;  // per key, the rows linking to it (banded_links.h)
  bool causal = false;
  real scale = 1;

  // The first and one-past-last band slot of row i whose key lies in [0, T).
  int64_t slot_begin(int64_t i) const { return std::max<int64_t>(0, window - i); }
  int64_t slot_end(int64_t i) const { return std::min(width, t_len - i + window); }
  // Whether ordinary row i reads global key globals[m] through its global slot W + m: when the
  // band does not already hold it, and (causal) it is not in the future.
  bool global_slot_visible(int64_t i, int64_t m) const {
    const int64_t j = globals[static_cast<size_t>(m)], dist = i - j;
    const bool in_band = causal ? (dist >= 0 && dist <= window) : std::abs(dist) <= window;
    return !in_band && (!causal || j <= i);
  }
  // Keys [0, key_end(i)) of a global query row.
  int64_t key_end(int64_t i) const { return causal ? i + 1 : t_len; }
  // Calls f(n, j) for every key j ordinary row i reads, n its slot in the row's (W + g + r)
  // entries: the band, the global keys outside it, the row's random links.
  template <class F>
  void each_key(int64_t i, const F& f) const {
    for (int64_t c = slot_begin(i); c < slot_end(i); ++c) f(c, i - window + c);
    each_extra_key(i, f);
  }
  // The same for the keys outside the band only: the global keys and the row's random links.
  template <class F>
  void each_extra_key(int64_t i, const F& f) const {
    for (int64_t g = 0; g < n_global; ++g)
      if (global_slot_visible(i, g)) f(width + g, globals[static_cast<size_t>(g)]);
    for (int64_t n = 0; n < links.per_row; ++n)
      if (const int64_t j = links.key(i, n); j >= 0) f(width + n_global + n, j);
  }

  BandedAttentionOp(int64_t window_in, bool is_causal, real scale_in)
      : window(window_in), causal(is_causal), scale(scale_in) {}

  static constexpr int64_t kBlockRows = 32;
  int64_t blocks() const { return (t_len + kBlockRows - 1) / kBlockRows; }
  // The keys [first, second) that the bands of rows [i0, i1) reach: row i reads i - w .. i + w
  // (causal: .. i).
  std::pair<int64_t, int64_t> band_keys(int64_t i0, int64_t i1) const {
    return {std::max<int64_t>(0, i0 - window), std::min(t_len, i1 + (causal ? 0 : window))};
  }
  // The rows [first, second) whose bands reach keys [j0, j1).
  std::pair<int64_t, int64_t> band_rows(int64_t j0, int64_t j1) const {
    return {std::max<int64_t>(0, j0 - (causal ? 0 : window)), std::min(t_len, j1 + window)};
  }
  // Ordinary row i's band slots, from its row of a dense block over keys [j_lo, ...) into its
  // (W + g + r) entries, and back: slot c holds key i - w + c.
  void band_from_dense(int64_t i, const real* dense_row, int64_t j_lo, real* slots_row) const {
    for (int64_t c = slot_begin(i); c < slot_end(i); ++c)
      slots_row[c] = dense_row[i - window + c - j_lo];
  }
  void band_to_dense(int64_t i, const real* slots_row, int64_t j_lo, real* dense_row) const {
    for (int64_t c = slot_begin(i); c < slot_end(i); ++c)
      dense_row[i - window + c - j_lo] = slots_row[c];
  }
  bool is_global(int64_t i) const { return global_index[static_cast<size_t>(i)] >= 0; }
  // Block blk: rows [i0, i1) of batch entry b and the keys [j_lo, j_lo + keys) their bands reach,
  // with a (rows x keys) dense block for a product over them.
  struct RowBlock {
    int64_t b, i0, i1, j_lo, keys;
    std::vector<real> dense;
  };
  RowBlock row_block(int64_t blk) const {
    const int64_t b = blk / blocks(), i0 = blk % blocks() * kBlockRows;
    const int64_t i1 = std::min(t_len, i0 + kBlockRows);
    const auto [j_lo, j_hi] = band_keys(i0, i1);
    return {b,    i0,          i1,
            j_lo, j_hi - j_lo, std::vector<real>(static_cast<size_t>((i1 - i0) * (j_hi - j_lo)))};
  }
  // The block's ordinary rows' band entries of `per_slot` (p or dS) laid out in its dense block,
  // zero elsewhere (global rows, keys outside a row's band).
  void bands_to_dense(RowBlock& rb, const Tensor& per_slot) const {
    std::fill(rb.dense.begin(), rb.dense.end(), real(0));
    for (int64_t i = rb.i0; i < rb.i1; ++i)
      if (!is_global(i))
        band_to_dense(i, per_slot.data() + (rb.b * t_len + i) * slots, rb.j_lo,
                      rb.dense.data() + (i - rb.i0) * rb.keys);
  }

  // q (...,T,D), k (...,T,D), v (...,T,Dv) -> o (...,T,Dv). An ordinary row i reads its band
  // slots c (key j = i - w + c), the global keys outside the band and its links; a global row
  // reads every key (causal: j <= i). Over the keys S_i a row reads:
  //   s_j = scale q_i . k_j,   p_j = exp(s_j - max s) / sum_{j' in S_i} exp(s_j' - max s),
  //   o_i = sum_{j in S_i} p_j v_j.
  // (window, causal and scale come from the constructor; scale 0 means 1/sqrt(D).)
  Tensor forward(const Tensor& q_in,
                 const Tensor& k_in,
                 const Tensor& v_in,
                 const std::vector<int64_t>& global_in,
                 const RandomLinks& links_in) {
    q = q_in, k = k_in, v = v_in;
    check_shapes(global_in);
    width = causal ? window + 1 : 2 * window + 1;
    by_key = linked_rows(links_in, t_len, window, causal, global_index);
    links = links_in;
    slots = width + n_global + links.per_row;
    if (scale == 0) scale = static_cast<real>(1.0 / std::sqrt(static_cast<double>(d)));
    Shape out_shape = q.shape();
    out_shape.back() = dv;
    Tensor o = Tensor::empty(out_shape);  // every row is written (products with beta 0)
    p = Tensor::zeros({batch, t_len, slots});
    pg = Tensor::zeros({batch, std::max<int64_t>(n_global, 1), t_len});
    kernels::parallel_for(batch * blocks(), kBlockRows * slots * (d + dv),
                          [&](int64_t blk) { forward_block(blk, o); });
    return o;
  }

  // Given dO (...,T,Dv), per row i and key j it reads (weight p_j):
  //   dP_j = dO_i . v_j,   D_i = sum_j p_j dP_j (= dO_i . o_i),   dS_j = p_j (dP_j - D_i),
  //   dq_i = scale sum_j dS_j k_j,   dk_j += scale dS_j q_i,   dv_j += p_j dO_i.
  // The row pass computes dS and dq. The key pass gathers, per key j, from every row that read
  // it: the band rows i = j + w - c (slot c), the global query rows, when j is global the
  // ordinary rows' global slot for j, and the rows linking to j — so no two jobs write the same
  // row: no atomics.
  void backward() override {
    const Tensor& gy = dy();
    Tensor ds = Tensor::zeros(p.shape()), dsg = Tensor::zeros(pg.shape());
    // Every row of these is written by the blocks' products (beta 0) before anything adds to it.
    Tensor dq = Tensor::empty(q.shape()), dk = Tensor::empty(k.shape()),
           dvv = Tensor::empty(v.shape());
    kernels::parallel_for(batch * blocks(), kBlockRows * slots * (d + dv),
                          [&](int64_t blk) { backward_row_block(blk, gy, ds, dsg, dq); });
    kernels::parallel_for(batch * blocks(), kBlockRows * slots * (d + dv),
                          [&](int64_t blk) { backward_key_block(blk, gy, ds, dsg, dk, dvv); });
    accumulate(0, dq);
    accumulate(1, dk);
    accumulate(2, dvv);
  }

  const char* name() const override { return "banded_attention"; }

 private:
  // Rows [i0, i1) of batch entry b (block blk): S = scale Q K^T over the keys their bands reach
  // (one product), each ordinary row's band taken from S and its other keys' scores added, the
  // softmax over the row's slots (hidden ones -inf, weight 0), then O = P V over the same keys
  // (the weights put back in the block) plus the other keys' terms. Global rows: full rows.
  void forward_block(int64_t blk, Tensor& o) {
    RowBlock rb = row_block(blk);
    const int64_t b = rb.b, i0 = rb.i0, i1 = rb.i1, j_lo = rb.j_lo, keys = rb.keys;
    std::vector<real>& dense = rb.dense;
    const real *qb = q.data() + b * t_len * d, *kb = k.data() + b * t_len * d,
               *vb = v.data() + b * t_len * dv;
    real* ob = o.data() + b * t_len * dv;
    kernels::gemm(false, true, i1 - i0, keys, d, scale, qb + i0 * d, d, kb + j_lo * d, d, 0,
                  dense.data(), keys);
    for (int64_t i = i0; i < i1; ++i) {
      if (is_global(i)) continue;
      real* pr = p.data() + (b * t_len + i) * slots;
      std::fill(pr, pr + slots, -std::numeric_limits<real>::infinity());
      band_from_dense(i, dense.data() + (i - i0) * keys, j_lo, pr);
      each_extra_key(
          i, [&](int64_t n, int64_t j) { pr[n] = scale * band_dot(qb + i * d, kb + j * d, d); });
      kernels::softmax_row(pr, pr, slots);
    }
    bands_to_dense(rb, p);
    kernels::gemm(false, false, i1 - i0, dv, keys, 1, dense.data(), keys, vb + j_lo * dv, dv, 0,
                  ob + i0 * dv, dv);
    for (int64_t i = i0; i < i1; ++i) {
      real* oi = ob + i * dv;
      if (!is_global(i)) {
        const real* pr = p.data() + (b * t_len + i) * slots;
        each_extra_key(i, [&](int64_t n, int64_t j) { axpy(pr[n], vb + j * dv, oi, dv); });
        continue;
      }
      // A global query: a full (causal: lower) row, s = scale q_i K^T, p = softmax(s), o_i = p V.
      const int64_t n = key_end(i);
      real* pr = pg.data() + (b * n_global + global_index[static_cast<size_t>(i)]) * t_len;
      kernels::gemm(false, true, 1, n, d, scale, qb + i * d, d, kb, d, 0, pr, n);
      kernels::softmax_row(pr, pr, n);
      kernels::gemm(false, false, 1, dv, n, 1, pr, n, vb, dv, 0, oi, dv);
    }
  }

  // The row pass over rows [i0, i1): dP = dO V^T over the keys the bands reach (one product), each
  // ordinary row's band of it and its other keys' dP_j, dS = p (dP - D) over its slots, then
  // dq = scale dS K over the block (dS put back in the block) plus the other keys' terms.
  void backward_row_block(
      int64_t blk, const Tensor& gy, Tensor& ds, Tensor& dsg, Tensor& dq) const {
    RowBlock rb = row_block(blk);
    const int64_t b = rb.b, i0 = rb.i0, i1 = rb.i1, j_lo = rb.j_lo, keys = rb.keys;
    std::vector<real>& dense = rb.dense;
    const real *gb = gy.data() + b * t_len * dv, *kb = k.data() + b * t_len * d,
               *vb = v.data() + b * t_len * dv;
    real* dqb = dq.data() + b * t_len * d;
    kernels::gemm(false, true, i1 - i0, keys, dv, 1, gb + i0 * dv, dv, vb + j_lo * dv, dv, 0,
                  dense.data(), keys);
    for (int64_t i = i0; i < i1; ++i) {
      if (is_global(i)) continue;
      const real* pr = p.data() + (b * t_len + i) * slots;
      real* sr = ds.data() + (b * t_len + i) * slots;
      band_from_dense(i, dense.data() + (i - i0) * keys, j_lo, sr);
      each_extra_key(i,
                     [&](int64_t n, int64_t j) { sr[n] = band_dot(gb + i * dv, vb + j * dv, dv); });
      kernels::softmax_backward_row(pr, sr, sr, slots);
    }
    bands_to_dense(rb, ds);
    kernels::gemm(false, false, i1 - i0, d, keys, scale, dense.data(), keys, kb + j_lo * d, d, 0,
                  dqb + i0 * d, d);
    for (int64_t i = i0; i < i1; ++i) {
      real* dqi = dqb + i * d;
      const real* gi = gb + i * dv;
      if (!is_global(i)) {
        const real* sr = ds.data() + (b * t_len + i) * slots;
        each_extra_key(i, [&](int64_t n, int64_t j) { axpy(scale * sr[n], kb + j * d, dqi, d); });
        continue;
      }
      // A global query's full row: dP = dO_i V^T, dS = p (dP - D), dq_i = scale dS K.
      const int64_t off = (b * n_global + global_index[static_cast<size_t>(i)]) * t_len;
      const int64_t n = key_end(i);
      real* sr = dsg.data() + off;
      kernels::gemm(false, true, 1, n, dv, 1, gi, dv, vb, dv, 0, sr, n);
      kernels::softmax_backward_row(pg.data() + off, sr, sr, n);
      kernels::gemm(false, false, 1, d, n, scale, sr, n, kb, d, 0, dqi, d);
    }
  }

  // The key pass over keys [j0, j1): dK = scale dS^T Q and dV = P^T dO over the rows whose bands
  // reach them (two products, the bands' entries laid out by key), then, per key, what the rows
  // that read it outside their bands add: the global query rows, when the key is global the
  // ordinary rows' global slot for it, and the rows linking to it.
  void backward_key_block(int64_t blk,
                          const Tensor& gy,
                          const Tensor& ds,
                          const Tensor& dsg,
                          Tensor& dk,
                          Tensor& dvv) const {
    const int64_t b = blk / blocks(), j0 = blk % blocks() * kBlockRows;
    const int64_t j1 = std::min(t_len, j0 + kBlockRows);
    const auto [i_lo, i_hi] = band_rows(j0, j1);
    const int64_t rows = i_hi - i_lo;
    std::vector<real> ds_t(static_cast<size_t>((j1 - j0) * rows)), p_t(ds_t.size());
    for (int64_t i = i_lo; i < i_hi; ++i) {  // global rows' band slots hold zeros: skipped
      if (is_global(i)) continue;
      const int64_t r = b * t_len + i;
      const int64_t c_lo = std::max(slot_begin(i), j0 - i + window);
      const int64_t c_hi = std::min(slot_end(i), j1 - i + window);
      for (int64_t c = c_lo; c < c_hi; ++c) {
        const size_t at = static_cast<size_t>((i - window + c - j0) * rows + (i - i_lo));
        ds_t[at] = ds[r * slots + c], p_t[at] = p[r * slots + c];
      }
    }
    const real *qb = q.data() + b * t_len * d, *gb = gy.data() + b * t_len * dv;
    kernels::gemm(false, false, j1 - j0, d, rows, scale, ds_t.data(), rows, qb + i_lo * d, d, 0,
                  dk.data() + (b * t_len + j0) * d, d);
    kernels::gemm(false, false, j1 - j0, dv, rows, 1, p_t.data(), rows, gb + i_lo * dv, dv, 0,
                  dvv.data() + (b * t_len + j0) * dv, dv);
    for (int64_t j = j0; j < j1; ++j) gather_outside_bands(b, j, gy, ds, dsg, dk, dvv);
  }

  void gather_outside_bands(int64_t b,
                            int64_t j,
                            const Tensor& gy,
                            const Tensor& ds,
                            const Tensor& dsg,
                            Tensor& dk,
                            Tensor& dvv) const {
    real* dkj = dk.data() + (b * t_len + j) * d;
    real* dvj = dvv.data() + (b * t_len + j) * dv;
    auto gather = [&](int64_t r, real dsv, real pv) {  // row r (in the batch) read key j
      axpy(scale * dsv, q.data() + r * d, dkj, d);
      axpy(pv, gy.data() + r * dv, dvj, dv);
    };
    for (int64_t g = 0; g < n_global; ++g) {  // global query rows
      const int64_t off = (b * n_global + g) * t_len + j;
      gather(b * t_len + globals[static_cast<size_t>(g)], dsg[off], pg[off]);
    }
    const int64_t link_base = width + n_global;
    for (int64_t e = by_key.start[static_cast<size_t>(j)];
         e < by_key.start[static_cast<size_t>(j) + 1]; ++e) {  // rows linking to j
      const int64_t r = b * t_len + by_key.row[static_cast<size_t>(e)];
      const int64_t n = link_base + by_key.slot[static_cast<size_t>(e)];
      gather(r, ds[r * slots + n], p[r * slots + n]);
    }
    const int64_t m_key = global_index[static_cast<size_t>(j)];
    if (m_key < 0) return;
    for (int64_t i = 0; i < t_len; ++i) {  // ordinary rows through their global slot
      const int64_t r = b * t_len + i;
      gather(r, ds[r * slots + width + m_key], p[r * slots + width + m_key]);
    }
  }

  void check_shapes(const std::vector<int64_t>& global_in) {
    const Shape &qs = q.shape(), &ks = k.shape(), &vs = v.shape();
    auto fail = [&](const std::string& why) {
      return Error(fmt::format("banded_attention: {}: q {}, k {}, v {}", why, shape_str(qs),
                               shape_str(ks), shape_str(vs)));
    };
    const size_t r = qs.size();
    if (r < 2 || ks.size() != r || vs.size() != r) throw fail("q, k, v need the same rank >= 2");
    if (!std::equal(qs.begin(), qs.end() - 1, ks.begin()) ||
        !std::equal(qs.begin(), qs.end() - 2, vs.begin()) || vs[r - 2] != qs[r - 2])
      throw fail("q, k and v need the same batch axes and positions T (self-attention)");
    t_len = qs[r - 2], d = qs.back(), dv = vs.back();
    if (t_len == 0 || d == 0) throw fail("empty attention");
    if (window < 0) throw fail(fmt::format("window must be >= 0, got {}", window));
    batch = q.numel() / (t_len * d);
    globals = global_in;
    std::sort(globals.begin(), globals.end());
    globals.erase(std::unique(globals.begin(), globals.end()), globals.end());
    for (int64_t g : globals)
      if (g < 0 || g >= t_len) throw fail(fmt::format("global token {} outside [0, {})", g, t_len));
    n_global = static_cast<int64_t>(globals.size());
    global_index.assign(static_cast<size_t>(t_len), -1);
    for (int64_t m = 0; m < n_global; ++m) global_index[static_cast<size_t>(globals[m])] = m;
  }
};

Var banded_attention(const Var& q,
                     const Var& k,
                     const Var& v,
                     int64_t window,
                     bool causal,
                     real scale,
                     const std::vector<int64_t>& global_tokens,
                     const RandomLinks& random_links) {
  auto op = std::make_unique<BandedAttentionOp>(window, causal, scale);
  Tensor y = op->forward(q.value(), k.value(), v.value(), global_tokens, random_links);
  return record(std::move(op), {q, k, v}, std::move(y));
}

}  // namespace attn
