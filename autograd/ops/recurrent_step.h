// RecurrentStepOp: what the fused RNN / GRU / LSTM step ops (recurrent_cells.h) share.
//
//   struct LstmCellOp final : RecurrentStepOp {
//     Tensor forward(...) {
//       Tensor a_h = begin_step("lstm_cell", gx, t, state, w_hh, b_ih, b_hh, 4, 2, lengths);
//       ... gate math per row b on a_x row b and a_h row b ...
//     }
//     void backward() override { ... da ... ; finish_backward(da_x, da_h, dh_prev); }
//   };
//
// Inputs are always {gx, state, w_hh, b_ih, b_hh}. The base computes the pre-activations
//   a_x = gx[t] + b_ih           (the input part; gx holds x W_ih^T of every step)
//   a_h = h_prev W_hh^T + b_hh   (one GEMM for the whole batch and every gate)
// and, in backward, turns the gradients of the pre-activations into the gradients of the inputs:
//   dgx[t] += da_x,  db_ih += sum_b da_x,
//   dW_hh += da_h^T h_prev,  db_hh += sum_b da_h,  dh_prev += da_h W_hh.
// Those are added in place into the inputs' gradient buffers (gx's gradient is (T,B,G*H) and
// only row t is touched), so a step allocates nothing of sequence size.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "autograd/kernels/vec_math.h"
#include "autograd/tape.h"

namespace attn {

// Both gate functions take their exp from kernels::vexp (inline, no libm call; within 2 ulp of
// std::exp in float, std::exp itself in the double build): libm's expf was 8% of the W2 step.
inline real logistic(real v) {
  return 1 / (1 + kernels::vexp(-v));
}

// tanh through one exp: tanh(v) = 2 s(2v) - 1. The C library's tanhf goes through expm1f and
// cost a third of a whole LSTM training step (perf); this costs one exp and stays within
// ~2e-7 (absolute) of it in float, and at rounding level in the double build. Saturates
// cleanly: exp overflow gives -1, underflow gives 1.
inline real tanh_via_exp(real v) {
  return 2 / (1 + kernels::vexp(-2 * v)) - 1;
}

// Elementwise work per batch row and hidden unit, for parallel_for's threshold.
inline constexpr int64_t kCellCostPerUnit = 40;

struct RecurrentStepOp : Op {
  int64_t t = 0;                // the time step of gx this op reads
  int64_t batch = 0;            // B
  int64_t hidden = 0;           // H
  int64_t width = 0;            // G*H: every gate's pre-activations side by side
  std::vector<uint8_t> active;  // per batch row: 1 while t < length, 0 when frozen
  Tensor state_prev;            // the previous state; its first B*H values are h_prev (B,H)
  Tensor w_hh;                  // (G*H,H)
  Tensor a_x;                   // (B,G*H): gx[t] + b_ih, filled by begin_step

  // Checks shapes, saves what backward needs, fills a_x and returns a_h = h W_hh^T + b_hh
  // (B,G*H). gx (T,B,G*H), state (B,H) or (2,B,H) (h first), w_hh (G*H,H), b_ih, b_hh (G*H).
  // With fold_input (cells that only ever use a_x + a_h: LSTM), a_x is not made and the
  // returned tensor is the whole pre-activation a_x + a_h, built in the GEMM's output.
  Tensor begin_step(const char* op,
                    const Tensor& gx,
                    int64_t step,
                    const Tensor& state,
                    const Tensor& w,
                    const Tensor& b_ih,
                    const Tensor& b_hh,
                    int64_t gates,
                    int64_t state_parts,  // 1: state (B,H); 2: state (2,B,H) = [h; c]
                    const std::vector<int64_t>& lengths,
                    bool fold_input = false);

  // The recurrent product h_prev (B,H) W_hh^T (H,G*H): 2 B H G*H. (x W_ih^T of every step is
  // the matmul before the loop, counted there.)
  double forward_flops() const override {
    return 2.0 * static_cast<double>(batch) * static_cast<double>(hidden) *
           static_cast<double>(width);
  }

  // Row b of a_x: the G*H input pre-activations of one batch row.
  const real* ax_row(int64_t b) const { return a_x.data() + b * width; }

  // da_x (B,G*H) goes to gx[t] and b_ih; da_h (B,G*H) to b_hh and through the GEMM to w_hh
  // and dh_prev.
  // dh_prev points at B*H values already holding any direct (non-GEMM) contribution; the GEMM
  // adds to them. Row b of da_x and da_h must be 0 when the row is frozen. dgx_added: the cell
  // already added da_x into gx's gradient (grad_buffer(0)) in its own loop.
  void finish_backward(const Tensor& da_x,
                       const Tensor& da_h,
                       real* dh_prev,
                       bool dgx_added = false);

  const real* h_prev() const { return state_prev.data(); }
  bool is_active(int64_t b) const { return active[b] != 0; }

  // The gradient of input i, created as zeros on first use (and never shared with another
  // tensor: Node::own_grad), for adding into in place.
  Tensor& grad_buffer(size_t i);
  // grad of inputs i and j (G*H) += column sums of d (B,G*H): a bias shared by every batch
  // row (j = i for one bias; both biases at once when their pre-activation gradients agree).
  void add_column_sums(size_t i, size_t j, const Tensor& d);
};

}  // namespace attn
