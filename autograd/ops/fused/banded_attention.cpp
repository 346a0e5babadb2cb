// BandedAttentionOp: sliding-window attention that stores only the band of the score matrix.
//
// Query i sees the keys j = i - w + c for the slots c = 0 .. W-1, W = 2w+1 (causal: W = w+1, so
// j runs from i - w to i); slots whose j falls outside [0, T) are hidden (weight 0). Scores,
// weights and their gradients live in (batch, T, W) arrays: O(T w) memory and O(T w D) time,
// forward and backward, where masking a (T,T) matrix costs O(T^2) in both.
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

real dot(const real* a, const real* b, int64_t n) {
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
  Tensor p;        // (batch, T, W): the weights of the band, 0 in hidden slots
  int64_t batch = 1, t_len = 0, d = 0, dv = 0, window = 0, width = 0;
  bool causal = false;
  real scale = 1;

  // The first and one-past-last slot of row i whose key lies in [0, T).
  int64_t slot_begin(int64_t i) const { return std::max<int64_t>(0, window - i); }
  int64_t slot_end(int64_t i) const { return std::min(width, t_len - i + window); }

  // q (...,T,D), k (...,T,D), v (...,T,Dv) -> o (...,T,Dv). Per row i, over its visible slots c
  // (key j = i - w + c):
  //   s_c = scale q_i . k_j,   p_c = exp(s_c - max s) / sum_c' exp(s_c' - max s),
  //   o_i = sum_c p_c v_j.
  Tensor forward(const Tensor& q_in,
                 const Tensor& k_in,
                 const Tensor& v_in,
                 int64_t window_in,
                 bool is_causal,
                 real scale_in) {
    q = q_in, k = k_in, v = v_in, window = window_in, causal = is_causal;
    check_shapes();
    width = causal ? window + 1 : 2 * window + 1;
    scale = scale_in != 0 ? scale_in : static_cast<real>(1.0 / std::sqrt(static_cast<double>(d)));
    Shape out_shape = q.shape();
    out_shape.back() = dv;
    Tensor o = Tensor::zeros(out_shape);
    p = Tensor::zeros({batch, t_len, width});
    kernels::parallel_for(batch * t_len, width * (d + dv), [&](int64_t row) {
      const int64_t b = row / t_len, i = row % t_len, c0 = slot_begin(i), c1 = slot_end(i);
      const real* qi = q.data() + row * d;
      const int64_t j0 = b * t_len + i - window;  // slot c reads key row j0 + c
      const real* kb = k.data();
      const real* vb = v.data();
      real* pr = p.data() + row * width;
      real m = -std::numeric_limits<real>::infinity();
      for (int64_t c = c0; c < c1; ++c)
        m = std::max(m, pr[c] = scale * dot(qi, kb + (j0 + c) * d, d));
      real sum = 0;
      for (int64_t c = c0; c < c1; ++c) sum += pr[c] = std::exp(pr[c] - m);
      real* oi = o.data() + row * dv;
      for (int64_t c = c0; c < c1; ++c) axpy(pr[c] /= sum, vb + (j0 + c) * dv, oi, dv);
    });
    return o;
  }

  // Given dO (...,T,Dv), per row i and visible slot c (key j = i - w + c):
  //   dP_c = dO_i . v_j,   D_i = sum_c p_c dP_c (= dO_i . o_i),   dS_c = p_c (dP_c - D_i),
  //   dq_i = scale sum_c dS_c k_j.
  // Each key j is slot c = j - i + w of the rows i = j + w - c, so its gradients gather over the
  // W rows around it (no two jobs write the same row: parallel without atomics):
  //   dk_j = scale sum_c dS_{i,c} q_i,   dv_j = sum_c p_{i,c} dO_i.
  void backward() override {
    const Tensor& g = dy();
    Tensor ds = Tensor::zeros({batch, t_len, width});
    Tensor dq = Tensor::zeros(q.shape()), dk = Tensor::zeros(k.shape()),
           dvv = Tensor::zeros(v.shape());
    kernels::parallel_for(batch * t_len, width * (d + dv), [&](int64_t row) {
      const int64_t b = row / t_len, i = row % t_len, c0 = slot_begin(i), c1 = slot_end(i);
      const real* gi = g.data() + row * dv;
      const int64_t j0 = b * t_len + i - window;  // slot c is key row j0 + c
      const real* kb = k.data();
      const real* vb = v.data();
      const real* pr = p.data() + row * width;
      real* sr = ds.data() + row * width;
      real row_dot = 0;
      for (int64_t c = c0; c < c1; ++c)
        row_dot += pr[c] * (sr[c] = dot(gi, vb + (j0 + c) * dv, dv));
      real* dqi = dq.data() + row * d;
      for (int64_t c = c0; c < c1; ++c) {
        sr[c] = pr[c] * (sr[c] - row_dot);
        axpy(scale * sr[c], kb + (j0 + c) * d, dqi, d);
      }
    });
    kernels::parallel_for(batch * t_len, width * (d + dv), [&](int64_t key) {
      const int64_t b = key / t_len, j = key % t_len;
      real* dkj = dk.data() + key * d;
      real* dvj = dvv.data() + key * dv;
      for (int64_t c = 0; c < width; ++c) {
        const int64_t i = j + window - c;  // the row that reads key j in slot c
        if (i < 0 || i >= t_len) continue;
        const int64_t r = b * t_len + i;
        axpy(scale * ds[r * width + c], q.data() + r * d, dkj, d);
        axpy(p[r * width + c], g.data() + r * dv, dvj, dv);
      }
    });
    accumulate(0, dq);
    accumulate(1, dk);
    accumulate(2, dvv);
  }

  const char* name() const override { return "banded_attention"; }

 private:
  void check_shapes() {
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
  }
};

Var banded_attention(
    const Var& q, const Var& k, const Var& v, int64_t window, bool causal, real scale) {
  auto op = std::make_unique<BandedAttentionOp>();
  Tensor y = op->forward(q.value(), k.value(), v.value(), window, causal, scale);
  return record(std::move(op), {q, k, v}, std::move(y));
}

}  // namespace attn
