// GruCellOp: one GRU time step for a whole batch, the gate math fused in one kernel.
// Compiled without floating-point trap semantics (as kernels/vec_math.cpp) so the gate loop,
// whose exp is the inline kernels::vexp, vectorises; attnlab never enables FP traps.
#pragma GCC optimize("no-trapping-math")

#include <algorithm>

#include "autograd/kernels/parallel.h"
#include "autograd/ops/recurrent_cells.h"
#include "autograd/ops/recurrent_step.h"

namespace attn {

struct GruCellOp final : RecurrentStepOp {
  Tensor gates;  // (B,3H): r, z after the sigmoid, then a_h_n = (h W_hn^T + b_hn) as computed
  Tensor n;      // (B,H): the candidate state

  // gx (T,B,3H), h (B,H), w_hh (3H,H), b_ih, b_hh (3H) -> h' (B,H)
  //   x = gx[t] + b_ih and a_h = h W_hh^T + b_hh, both split into r, z, n parts (H columns each)
  //   r = s(x_r + a_h_r),  z = s(x_z + a_h_z),  n = tanh(x_n + r a_h_n)
  //   h' = (1 - z) n + z h
  // The reset gate multiplies a_h_n, which already holds b_hn: PyTorch's placement, which is
  // why the input and recurrent parts cannot be summed before the gate math.
  // A frozen row (t >= its length) copies h through.
  Tensor forward(const Tensor& gx,
                 int64_t step,
                 const Tensor& h_in,
                 const Tensor& w,
                 const Tensor& b_ih,
                 const Tensor& b_hh,
                 const std::vector<int64_t>& lengths) {
    gates = begin_step("gru_cell", gx, step, h_in, w, b_ih, b_hh, 3, 1, lengths);
    const int64_t rows = batch, h = hidden;
    n = Tensor::empty({rows, h});
    Tensor y = Tensor::empty({rows, h});
    const real* h0 = h_prev();
    kernels::parallel_for(rows, h * kCellCostPerUnit, [&](int64_t r) {
      real* out = y.data() + r * h;
      if (!is_active(r)) {
        std::copy(h0 + r * h, h0 + (r + 1) * h, out);
        return;
      }
      real* a = gates.data() + r * 3 * h;
      const real* x = ax_row(r);
#pragma omp simd  // gates, a_x, n and h' never overlap
      for (int64_t j = 0; j < h; ++j) {
        const real rg = logistic(x[j] + a[j]);
        const real z = logistic(x[h + j] + a[h + j]);
        const real nn = tanh_via_exp(x[2 * h + j] + rg * a[2 * h + j]);
        a[j] = rg, a[h + j] = z;
        n[r * h + j] = nn;
        out[j] = (1 - z) * nn + z * h0[r * h + j];
      }
    });
    return y;
  }

  // From dh':  dn = dh' (1-z),  dz = dh' (h - n),  and h gets dh' z directly.
  //   da_n = dn (1 - n^2)                      (pre-activation of n)
  //   da_r = da_n a_h_n r (1-r),  da_z = dz z (1-z)
  // The input part receives [da_r, da_z, da_n]; the recurrent part [da_r, da_z, da_n r]
  // (r scales a_h_n), which finish_backward sends to the biases and through the GEMM to W_hh and h.
  // A frozen row passes dh' straight to dh.
  void backward() override {
    const int64_t rows = batch, h = hidden;
    const real* dh1 = dy().data();
    const real* h0 = h_prev();
    Tensor da_x = Tensor::zeros({rows, 3 * h});
    Tensor da_h = Tensor::zeros({rows, 3 * h});
    Tensor dh = Tensor::zeros({rows, h});
    kernels::parallel_for(rows, h * kCellCostPerUnit, [&](int64_t r) {
      real* dh0 = dh.data() + r * h;
      if (!is_active(r)) {
        std::copy(dh1 + r * h, dh1 + (r + 1) * h, dh0);
        return;
      }
      const real* a = gates.data() + r * 3 * h;
      real* dx = da_x.data() + r * 3 * h;
      real* dr = da_h.data() + r * 3 * h;
      for (int64_t j = 0; j < h; ++j) {
        const int64_t k = r * h + j;
        const real rg = a[j], z = a[h + j], a_hn = a[2 * h + j], nn = n[k], g = dh1[k];
        const real dan = g * (1 - z) * (1 - nn * nn);
        const real dar = dan * a_hn * rg * (1 - rg);
        const real daz = g * (h0[k] - nn) * z * (1 - z);
        dx[j] = dr[j] = dar;
        dx[h + j] = dr[h + j] = daz;
        dx[2 * h + j] = dan;
        dr[2 * h + j] = dan * rg;
        dh0[j] = g * z;
      }
    });
    finish_backward(da_x, da_h, dh.data());
    accumulate(1, dh);
  }

  const char* name() const override {
    return "gru_cell";
  }
};

Var gru_cell(const Var& gx,
             int64_t t,
             const Var& h,
             const Var& w_hh,
             const Var& b_ih,
             const Var& b_hh,
             const std::vector<int64_t>& lengths) {
  auto op = std::make_unique<GruCellOp>();
  Tensor y =
      op->forward(gx.value(), t, h.value(), w_hh.value(), b_ih.value(), b_hh.value(), lengths);
  return record(std::move(op), {gx, h, w_hh, b_ih, b_hh}, std::move(y));
}

}  // namespace attn
