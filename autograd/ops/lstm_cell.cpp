// LstmCellOp: one LSTM time step for a whole batch, the gate math fused in one kernel.
// Compiled without floating-point trap semantics (as kernels/vec_math.cpp) so the gate loop,
// whose exp is the inline kernels::vexp, vectorises; attnlab never enables FP traps.
#pragma GCC optimize("no-trapping-math")

#include <algorithm>

#include "autograd/kernels/parallel.h"
#include "autograd/ops/recurrent_cells.h"
#include "autograd/ops/recurrent_step.h"

namespace attn {

struct LstmCellOp final : RecurrentStepOp {
  Tensor gates;   // (B,4H): i, f, g, o after their nonlinearities (unused in frozen rows)
  Tensor tanh_c;  // (B,H): tanh(c')

  // gx (T,B,4H), state (2,B,H) = [h; c], w_hh (4H,H), b_ih, b_hh (4H) -> (2,B,H) = [h'; c']
  //   a = (gx[t] + b_ih) + (h W_hh^T + b_hh), split into a_i, a_f, a_g, a_o (H columns each)
  //   i = s(a_i), f = s(a_f), g = tanh(a_g), o = s(a_o)      s = logistic sigmoid
  //   c' = f c + i g,  h' = o tanh(c')
  // A frozen row (t >= its length) copies [h; c] through.
  Tensor forward(const Tensor& gx,
                 int64_t step,
                 const Tensor& state,
                 const Tensor& w,
                 const Tensor& b_ih,
                 const Tensor& b_hh,
                 const std::vector<int64_t>& lengths) {
    // gates starts as the whole pre-activation a (folded) and is overwritten by i, f, g, o.
    gates = begin_step("lstm_cell", gx, step, state, w, b_ih, b_hh, 4, 2, lengths, true);
    const int64_t n = batch, h = hidden;
    tanh_c = Tensor::empty({n, h});
    Tensor y = Tensor::empty({2, n, h});
    const real* h0 = state.data();
    const real* c0 = h0 + n * h;
    real* h1 = y.data();
    real* c1 = h1 + n * h;
    kernels::parallel_for(n, h * kCellCostPerUnit, [&](int64_t r) {
      if (!is_active(r)) {
        std::copy(h0 + r * h, h0 + (r + 1) * h, h1 + r * h);
        std::copy(c0 + r * h, c0 + (r + 1) * h, c1 + r * h);
        return;
      }
      real* a = gates.data() + r * 4 * h;
      real* tcr = tanh_c.data() + r * h;
#pragma omp simd  // the row's buffers (gates, c, h', c', tanh c') never overlap
      for (int64_t j = 0; j < h; ++j) {
        const real i = logistic(a[j]);
        const real f = logistic(a[h + j]);
        const real g = tanh_via_exp(a[2 * h + j]);
        const real o = logistic(a[3 * h + j]);
        a[j] = i, a[h + j] = f, a[2 * h + j] = g, a[3 * h + j] = o;
        const real c = f * c0[r * h + j] + i * g;
        const real tc = tanh_via_exp(c);
        c1[r * h + j] = c;
        h1[r * h + j] = o * tc;
        tcr[j] = tc;
      }
    });
    return y;
  }

  // With dh', dc' the gradients of the two halves of the output:
  //   dc~ = dc' + dh' o (1 - tanh(c')^2)          (all the gradient reaching c')
  //   da_i = dc~ g i (1-i),   da_f = dc~ c f (1-f),
  //   da_g = dc~ i (1-g^2),   da_o = dh' tanh(c') o (1-o),   dc = dc~ f
  // and da goes to gx[t], b_ih, b_hh, and through the GEMM to W_hh and h (finish_backward).
  // A frozen row passes [dh'; dc'] straight to [dh; dc] and gives its gates nothing.
  void backward() override {
    const int64_t n = batch, h = hidden;
    const real* dh1 = dy().data();
    const real* dc1 = dh1 + n * h;
    const real* c0 = state_prev.data() + n * h;
    // Every value of da and dstate is written below (no zero-filled buffers): frozen rows get
    // da = 0; active rows get dh = 0 before the GEMM in finish_backward adds da W_hh into it.
    Tensor da = Tensor::empty({n, 4 * h});
    Tensor dstate = Tensor::empty({2, n, h});
    real* dh0 = dstate.data();
    real* dc0 = dh0 + n * h;
    // gx's gradient row t takes da in the same loop (the pre-activation is gx[t] + ...).
    real* dgx = needs_grad(0) ? grad_buffer(0).data() + t * n * 4 * h : nullptr;
    kernels::parallel_for(n, h * kCellCostPerUnit, [&](int64_t r) {
      real* d = da.data() + r * 4 * h;
      if (!is_active(r)) {
        std::copy(dh1 + r * h, dh1 + (r + 1) * h, dh0 + r * h);
        std::copy(dc1 + r * h, dc1 + (r + 1) * h, dc0 + r * h);
        std::fill(d, d + 4 * h, real(0));
        return;
      }
      const real* a = gates.data() + r * 4 * h;
      std::fill(dh0 + r * h, dh0 + (r + 1) * h, real(0));
#pragma omp simd  // da, dc0 and the saved gates, tanh(c'), c, dh', dc' never overlap
      for (int64_t j = 0; j < h; ++j) {
        const int64_t k = r * h + j;
        const real i = a[j], f = a[h + j], g = a[2 * h + j], o = a[3 * h + j];
        const real tc = tanh_c[k];
        const real dc = dc1[k] + dh1[k] * o * (1 - tc * tc);
        d[j] = dc * g * i * (1 - i);
        d[h + j] = dc * c0[k] * f * (1 - f);
        d[2 * h + j] = dc * i * (1 - g * g);
        d[3 * h + j] = dh1[k] * tc * o * (1 - o);
        dc0[k] = dc * f;
      }
      if (dgx) {
        real* gr = dgx + r * 4 * h;
#pragma omp simd
        for (int64_t j = 0; j < 4 * h; ++j) gr[j] += d[j];
      }
    });
    finish_backward(da, da, dh0, /*dgx_added=*/true);
    accumulate(1, dstate);
  }

  const char* name() const override {
    return "lstm_cell";
  }
};

Var lstm_cell(const Var& gx,
              int64_t t,
              const Var& state,
              const Var& w_hh,
              const Var& b_ih,
              const Var& b_hh,
              const std::vector<int64_t>& lengths) {
  auto op = std::make_unique<LstmCellOp>();
  Tensor y =
      op->forward(gx.value(), t, state.value(), w_hh.value(), b_ih.value(), b_hh.value(), lengths);
  return record(std::move(op), {gx, state, w_hh, b_ih, b_hh}, std::move(y));
}

}  // namespace attn
