// RnnCellOp: one Elman RNN time step (tanh or relu) for a whole batch, fused.
// Compiled without floating-point trap semantics (as kernels/vec_math.cpp) so the gate loop,
// whose exp is the inline kernels::vexp, vectorises; attnlab never enables FP traps.
#pragma GCC optimize("no-trapping-math")

#include <algorithm>

#include "autograd/kernels/parallel.h"
#include "autograd/ops/recurrent_cells.h"
#include "autograd/ops/recurrent_step.h"

namespace attn {

struct RnnCellOp final : RecurrentStepOp {
  RnnNonlinearity nonlinearity = RnnNonlinearity::kTanh;
  Tensor h_new;  // (B,H): the output; both derivatives are expressed through it

  // gx (T,B,H), h (B,H), w_hh (H,H), b_ih, b_hh (H) -> h' (B,H)
  //   h' = act(gx[t] + b_ih + h W_hh^T + b_hh),  act = tanh or relu
  // A frozen row (t >= its length) copies h through.
  Tensor forward(const Tensor& gx,
                 int64_t step,
                 const Tensor& h_in,
                 const Tensor& w,
                 const Tensor& b_ih,
                 const Tensor& b_hh,
                 RnnNonlinearity act,
                 const std::vector<int64_t>& lengths) {
    nonlinearity = act;
    h_new = begin_step("rnn_cell", gx, step, h_in, w, b_ih, b_hh, 1, 1, lengths);
    const int64_t h = hidden;
    const real* h0 = h_prev();
    const bool use_tanh = act == RnnNonlinearity::kTanh;
    kernels::parallel_for(batch, h * kCellCostPerUnit, [&](int64_t r) {
      real* a = h_new.data() + r * h;
      if (!is_active(r)) {
        std::copy(h0 + r * h, h0 + (r + 1) * h, a);
        return;
      }
      const real* x = ax_row(r);
      if (use_tanh) {
#pragma omp simd  // a (h') and a_x never overlap
        for (int64_t j = 0; j < h; ++j) a[j] = tanh_via_exp(a[j] + x[j]);
      } else {
        for (int64_t j = 0; j < h; ++j) a[j] = std::max<real>(a[j] + x[j], 0);
      }
    });
    return h_new;
  }

  // da = dh' act'(a) with tanh' = 1 - h'^2 and relu' = [h' > 0]; da flows to gx[t], both
  // biases, and through the GEMM to W_hh and h. A frozen row passes dh' straight to dh.
  void backward() override {
    const int64_t h = hidden;
    const real* dh1 = dy().data();
    const bool use_tanh = nonlinearity == RnnNonlinearity::kTanh;
    Tensor da = Tensor::zeros({batch, h});
    Tensor dh = Tensor::zeros({batch, h});
    kernels::parallel_for(batch, h * kCellCostPerUnit, [&](int64_t r) {
      const int64_t o = r * h;
      if (!is_active(r)) {
        std::copy(dh1 + o, dh1 + o + h, dh.data() + o);
        return;
      }
      for (int64_t j = 0; j < h; ++j) {
        const real y = h_new[o + j];
        da[o + j] = dh1[o + j] * (use_tanh ? 1 - y * y : real(y > 0));
      }
    });
    finish_backward(da, da, dh.data());
    accumulate(1, dh);
  }

  const char* name() const override {
    return nonlinearity == RnnNonlinearity::kTanh ? "rnn_tanh_cell" : "rnn_relu_cell";
  }
};

Var rnn_cell(const Var& gx,
             int64_t t,
             const Var& h,
             const Var& w_hh,
             const Var& b_ih,
             const Var& b_hh,
             RnnNonlinearity nonlinearity,
             const std::vector<int64_t>& lengths) {
  auto op = std::make_unique<RnnCellOp>();
  Tensor y = op->forward(gx.value(), t, h.value(), w_hh.value(), b_ih.value(), b_hh.value(),
                         nonlinearity, lengths);
  return record(std::move(op), {gx, h, w_hh, b_ih, b_hh}, std::move(y));
}

}  // namespace attn
