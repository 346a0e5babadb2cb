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
#include "autograd/kernels/parallel.h"

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
  RandomLinks links;                  // (T, r) link keys per row, -1 = empty
  std::vector<int64_t> linked_start;  // (T + 1): the rows linking to key j are entries
  std::vector<int64_t> linked_row;    // [linked_start[j], linked_start[j+1]) of linked_row
  std::vector<int64_t> linked_slot;   // and, for each, the link slot n (0 .. r-1) it used
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
    for (int64_t g = 0; g < n_global; ++g)
      if (global_slot_visible(i, g)) f(width + g, globals[static_cast<size_t>(g)]);
    for (int64_t n = 0; n < links.per_row; ++n)
      if (const int64_t j = links.key(i, n); j >= 0) f(width + n_global + n, j);
  }

  BandedAttentionOp(int64_t window_in, bool is_causal, real scale_in)
      : window(window_in), causal(is_causal), scale(scale_in) {}

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
    check_links(links_in);
    slots = width + n_global + links.per_row;
    if (scale == 0) scale = static_cast<real>(1.0 / std::sqrt(static_cast<double>(d)));
    Shape out_shape = q.shape();
    out_shape.back() = dv;
    Tensor o = Tensor::zeros(out_shape);
    p = Tensor::zeros({batch, t_len, slots});
    pg = Tensor::zeros({batch, std::max<int64_t>(n_global, 1), t_len});
    kernels::parallel_for(batch * t_len, slots * (d + dv), [&](int64_t row) {
      const int64_t b = row / t_len, i = row % t_len;
      const int64_t m_row = global_index[static_cast<size_t>(i)];
      const real* qi = q.data() + row * d;
      const real* kb = k.data() + b * t_len * d;  // this batch's keys and values
      const real* vb = v.data() + b * t_len * dv;
      real* oi = o.data() + row * dv;
      if (m_row >= 0) {  // a global query: a full (causal: lower) row
        real* pr = pg.data() + (b * n_global + m_row) * t_len;
        softmax_row(qi, kb, pr, key_end(i));
        for (int64_t j = 0; j < key_end(i); ++j) axpy(pr[j], vb + j * dv, oi, dv);
        return;
      }
      real* pr = p.data() + row * slots;
      real m = -std::numeric_limits<real>::infinity(), sum = 0;
      each_key(i, [&](int64_t n, int64_t j) {
        m = std::max(m, pr[n] = scale * band_dot(qi, kb + j * d, d));
      });
      each_key(i, [&](int64_t n, int64_t) { sum += pr[n] = std::exp(pr[n] - m); });
      each_key(i, [&](int64_t n, int64_t j) { axpy(pr[n] /= sum, vb + j * dv, oi, dv); });
    });
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
    Tensor dq = Tensor::zeros(q.shape()), dk = Tensor::zeros(k.shape()),
           dvv = Tensor::zeros(v.shape());
    kernels::parallel_for(batch * t_len, slots * (d + dv), [&](int64_t row) {
      const int64_t b = row / t_len, i = row % t_len;
      const int64_t m_row = global_index[static_cast<size_t>(i)];
      const real* gi = gy.data() + row * dv;
      const real* kb = k.data() + b * t_len * d;
      const real* vb = v.data() + b * t_len * dv;
      real* dqi = dq.data() + row * d;
      // each_entry(f) calls f(n, j) for every entry n of this row's weights, j its key row.
      auto gradient_row = [&](const real* pr, real* sr, const auto& each_entry) {
        real row_dot = 0;
        each_entry([&](int64_t n, int64_t j) {
          row_dot += pr[n] * (sr[n] = band_dot(gi, vb + j * dv, dv));
        });
        each_entry([&](int64_t n, int64_t j) {
          sr[n] = pr[n] * (sr[n] - row_dot);
          axpy(scale * sr[n], kb + j * d, dqi, d);
        });
      };
      if (m_row >= 0) {  // a global query's full row
        const int64_t off = (b * n_global + m_row) * t_len;
        gradient_row(pg.data() + off, dsg.data() + off, [&](const auto& f) {
          for (int64_t j = 0; j < key_end(i); ++j) f(j, j);
        });
        return;
      }
      gradient_row(p.data() + row * slots, ds.data() + row * slots,
                   [&](const auto& f) { each_key(i, f); });
    });
    kernels::parallel_for(batch * t_len, slots * (d + dv), [&](int64_t key) {
      const int64_t b = key / t_len, j = key % t_len;
      real* dkj = dk.data() + key * d;
      real* dvj = dvv.data() + key * dv;
      auto gather = [&](int64_t r, real dsv, real pv) {  // row r (in the batch) read key j
        axpy(scale * dsv, q.data() + r * d, dkj, d);
        axpy(pv, gy.data() + r * dv, dvj, dv);
      };
      for (int64_t c = 0; c < width; ++c) {  // band rows (global rows hold zeros here)
        const int64_t i = j + window - c;    // the row that reads key j in slot c
        if (i < 0 || i >= t_len) continue;
        const int64_t r = b * t_len + i;
        gather(r, ds[r * slots + c], p[r * slots + c]);
      }
      for (int64_t g = 0; g < n_global; ++g) {  // global query rows
        const int64_t off = (b * n_global + g) * t_len + j;
        gather(b * t_len + globals[static_cast<size_t>(g)], dsg[off], pg[off]);
      }
      const int64_t link_base = width + n_global;
      for (int64_t e = linked_start[static_cast<size_t>(j)];
           e < linked_start[static_cast<size_t>(j) + 1]; ++e) {  // rows linking to j
        const int64_t r = b * t_len + linked_row[static_cast<size_t>(e)];
        const int64_t n = link_base + linked_slot[static_cast<size_t>(e)];
        gather(r, ds[r * slots + n], p[r * slots + n]);
      }
      const int64_t m_key = global_index[static_cast<size_t>(j)];
      if (m_key < 0) return;
      for (int64_t i = 0; i < t_len; ++i) {  // ordinary rows through their global slot
        const int64_t r = b * t_len + i;
        gather(r, ds[r * slots + width + m_key], p[r * slots + width + m_key]);
      }
    });
    accumulate(0, dq);
    accumulate(1, dk);
    accumulate(2, dvv);
  }

  const char* name() const override { return "banded_attention"; }

 private:
  // A full softmax row over the keys 0 .. n-1: pr[j] = softmax_j(scale q_i . k_j).
  void softmax_row(const real* qi, const real* kb, real* pr, int64_t n) const {
    real m = -std::numeric_limits<real>::infinity();
    for (int64_t j = 0; j < n; ++j) m = std::max(m, pr[j] = scale * band_dot(qi, kb + j * d, d));
    real sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += pr[j] = std::exp(pr[j] - m);
    for (int64_t j = 0; j < n; ++j) pr[j] /= sum;
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

  // Enforces random_links.h's rule (an ordinary row's links lie outside its band, are not
  // global, causal in its past, and are distinct; a global row has none), so that no key is read
  // twice, then builds the inverse lists the key pass walks: O(T r).
  void check_links(const RandomLinks& in) {
    auto fail = [&](const std::string& why) {
      return Error(fmt::format("banded_attention: random links: {}", why));
    };
    if (in.per_row < 0) throw fail(fmt::format("per_row must be >= 0, got {}", in.per_row));
    if (static_cast<int64_t>(in.keys.size()) != t_len * in.per_row)
      throw fail(fmt::format("{} keys for T = {} rows of {}", in.keys.size(), t_len, in.per_row));
    links = in;
    std::vector<int64_t> count(static_cast<size_t>(t_len) + 1, 0);
    for (int64_t i = 0; i < t_len; ++i)
      for (int64_t n = 0; n < links.per_row; ++n) {
        const int64_t j = links.key(i, n);
        if (j == -1) continue;
        const auto bad = [&](const char* why) {
          return fail(fmt::format("row {} links to key {}: {}", i, j, why));
        };
        if (j < 0 || j >= t_len) throw bad("outside [0, T)");
        if (global_index[static_cast<size_t>(i)] >= 0) throw bad("a global row reads every key");
        if (global_index[static_cast<size_t>(j)] >= 0) throw bad("a global key");
        if (causal ? j >= i - window : std::abs(i - j) <= window)
          throw bad(causal ? "not before the band (causal)" : "inside the band");
        for (int64_t n2 = 0; n2 < n; ++n2)
          if (links.key(i, n2) == j) throw bad("a repeated link");
        ++count[static_cast<size_t>(j) + 1];
      }
    linked_start.assign(count.size(), 0);
    for (size_t j = 1; j < count.size(); ++j) linked_start[j] = linked_start[j - 1] + count[j];
    linked_row.assign(static_cast<size_t>(linked_start.back()), 0);
    linked_slot.assign(linked_row.size(), 0);
    std::vector<int64_t> next(linked_start.begin(), linked_start.end() - 1);
    for (int64_t i = 0; i < t_len; ++i)
      for (int64_t n = 0; n < links.per_row; ++n)
        if (const int64_t j = links.key(i, n); j >= 0) {
          const auto e = static_cast<size_t>(next[static_cast<size_t>(j)]++);
          linked_row[e] = i, linked_slot[e] = n;
        }
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
