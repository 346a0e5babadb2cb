// CausalLinearAttentionOp: causal linear attention by prefix sums (the fast-weight recurrence),
// O(T D M) time and O(D M) state instead of a T x T matrix.
//
// Replaces: the quadratic form y = (tril(fq fk^T) v) / (tril(fq fk^T) 1 + eps), a (T,T) matrix
// per head; here prefix sums, O(T D M). Its gain is the complexity (docs/chapters/
// linear-attention.md); not timed against the quadratic form. nn::LinearAttention keeps it in
// reference mode too (the recurrence is what that layer shows).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"

namespace attn {

struct CausalLinearAttentionOp final : Op {
  Tensor fq, fk, v;  // inputs (shared storage)
  Tensor y;          // output (shared with the result Var)
  Tensor den;        // (batch, T): fq_t . z_t + eps, saved for backward
  int64_t batch = 1, t_len = 0, d = 0, m = 0;
  real eps = 0;

  // fq (...,T,D), fk (...,T,D), v (...,T,M) -> y (...,T,M).  Walking t forward:
  //   S_t = S_{t-1} + fk_t v_t^T (D,M),  z_t = z_{t-1} + fk_t (D),
  //   y_t = fq_t^T S_t / (fq_t . z_t + eps).
  // Equal to sum_{s<=t} (fq_t.fk_s) v_s / (sum_{s<=t} fq_t.fk_s + eps): attention whose
  // similarity is the dot product of feature maps, so the sum over s can be carried along.
  Tensor forward(const Tensor& fq_in, const Tensor& fk_in, const Tensor& v_in, real eps_in) {
    fq = fq_in, fk = fk_in, v = v_in, eps = eps_in;
    check_shapes();
    Shape out_shape = fq.shape();
    out_shape.back() = m;
    y = Tensor::empty(out_shape);
    den = Tensor::empty({batch, t_len});
    kernels::parallel_for(batch, t_len * d * m * 2, [&](int64_t b) {
      std::vector<real> s(static_cast<size_t>(d * m), 0), z(static_cast<size_t>(d), 0);
      for (int64_t t = 0; t < t_len; ++t) {
        const real* q = fq.data() + (b * t_len + t) * d;
        const real* kk = fk.data() + (b * t_len + t) * d;
        const real* vv = v.data() + (b * t_len + t) * m;
        real* yt = y.data() + (b * t_len + t) * m;
        std::fill(yt, yt + m, real(0));
        real dn = eps;
        for (int64_t i = 0; i < d; ++i) {
          real* si = s.data() + i * m;
          for (int64_t j = 0; j < m; ++j) si[j] += kk[i] * vv[j];
          z[i] += kk[i];
          dn += q[i] * z[i];
          for (int64_t j = 0; j < m; ++j) yt[j] += q[i] * si[j];
        }
        den[b * t_len + t] = dn;
        for (int64_t j = 0; j < m; ++j) yt[j] /= dn;
      }
    });
    return y;
  }

  // With n_t = fq_t^T S_t, y_t = n_t / den_t:  dn_t = dy_t / den_t,  dden_t = -(dy_t . y_t) /
  // den_t.
  //   dfq_t = S_t dn_t + z_t dden_t                       (forward sweep, recomputing S, z)
  //   S_t and z_t feed every later step, so with G_s = sum_{t>=s} fq_t dn_t^T and
  //   g_s = sum_{t>=s} fq_t dden_t (reverse sweep):  dfk_s = G_s v_s + g_s,  dv_s = G_s^T fk_s.
  void backward() override {
    const Tensor& g = dy();
    Tensor dfq = Tensor::empty(fq.shape()), dfk = Tensor::empty(fk.shape()),
           dv = Tensor::empty(v.shape());
    kernels::parallel_for(batch, t_len * d * m * 6, [&](int64_t b) {
      std::vector<real> s(static_cast<size_t>(d * m), 0), z(static_cast<size_t>(d), 0),
          dn(static_cast<size_t>(m));
      // dn_t and dden_t of step t (from the saved output and denominator).
      auto step_grads = [&](int64_t t, real& dden) {
        const real* gt = g.data() + (b * t_len + t) * m;
        const real* yt = y.data() + (b * t_len + t) * m;
        const real inv = 1 / den[b * t_len + t];
        real dot = 0;
        for (int64_t j = 0; j < m; ++j) dot += gt[j] * yt[j], dn[j] = gt[j] * inv;
        dden = -dot * inv;
      };
      for (int64_t t = 0; t < t_len; ++t) {
        const real* kk = fk.data() + (b * t_len + t) * d;
        const real* vv = v.data() + (b * t_len + t) * m;
        real* dq = dfq.data() + (b * t_len + t) * d;
        real dden;
        step_grads(t, dden);
        for (int64_t i = 0; i < d; ++i) {
          real* si = s.data() + i * m;
          real acc = 0;
          for (int64_t j = 0; j < m; ++j) si[j] += kk[i] * vv[j], acc += si[j] * dn[j];
          z[i] += kk[i];
          dq[i] = acc + z[i] * dden;
        }
      }
      std::vector<real>& big_g = s;  // reuse the buffers for G and g
      std::vector<real>& small_g = z;
      std::fill(big_g.begin(), big_g.end(), real(0));
      std::fill(small_g.begin(), small_g.end(), real(0));
      for (int64_t t = t_len - 1; t >= 0; --t) {
        const real* q = fq.data() + (b * t_len + t) * d;
        const real* kk = fk.data() + (b * t_len + t) * d;
        const real* vv = v.data() + (b * t_len + t) * m;
        real* dk = dfk.data() + (b * t_len + t) * d;
        real* dvt = dv.data() + (b * t_len + t) * m;
        real dden;
        step_grads(t, dden);
        std::fill(dvt, dvt + m, real(0));
        for (int64_t i = 0; i < d; ++i) {
          real* gi = big_g.data() + i * m;
          small_g[i] += q[i] * dden;
          real acc = small_g[i];
          for (int64_t j = 0; j < m; ++j) {
            gi[j] += q[i] * dn[j];
            acc += gi[j] * vv[j];
            dvt[j] += gi[j] * kk[i];
          }
          dk[i] = acc;
        }
      }
    });
    accumulate(0, dfq);
    accumulate(1, dfk);
    accumulate(2, dv);
  }

  const char* name() const override { return "causal_linear_attention"; }

 private:
  void check_shapes() {
    const Shape &qs = fq.shape(), &ks = fk.shape(), &vs = v.shape();
    if (qs.size() < 2 || qs != ks || vs.size() != qs.size() ||
        !std::equal(qs.begin(), qs.end() - 1, vs.begin()))
      throw Error(fmt::format(
          "causal_linear_attention: expected fq (...,T,D), fk (...,T,D), v (...,T,M); got fq {}, "
          "fk {}, v {}",
          shape_str(qs), shape_str(ks), shape_str(vs)));
    t_len = qs[qs.size() - 2], d = qs.back(), m = vs.back();
    batch = t_len * d == 0 ? 0 : fq.numel() / (t_len * d);
  }
};

Var causal_linear_attention(const Var& fq, const Var& fk, const Var& v, real eps) {
  auto op = std::make_unique<CausalLinearAttentionOp>();
  Tensor y = op->forward(fq.value(), fk.value(), v.value(), eps);
  return record(std::move(op), {fq, fk, v}, std::move(y));
}

}  // namespace attn
