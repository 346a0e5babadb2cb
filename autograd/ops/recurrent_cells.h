// Fused recurrent steps: one op per time step of an Elman RNN, a GRU or an LSTM.
//
//   // x (T,B,I) -> input projections of every step in ONE GEMM:
//   Var gx = matmul(x, w_ih, false, true);                     // (T,B,4H)
//   Var s = Var::constant(Tensor::zeros({2, B, H}));           // LSTM state [h; c]
//   for (int64_t t = 0; t < T; ++t) s = lstm_cell(gx, t, s, w_hh, b_ih, b_hh);
//
// Each call does, for the whole batch and all gates at once, ONE GEMM for the recurrent part
//   a_h = h_prev W_hh^T + b_hh          h_prev (B,H), W_hh (G*H,H) -> (B,G*H)
// and then the elementwise gate math in one fused kernel whose backward is written by hand
// (the derivative of each gate is on the op's backward()). Row t of gx is read in place, and
// the backward adds into row t of gx's gradient, so a sequence costs no slicing copies.
//
// Gate layouts and formulas are PyTorch's (torch.nn.RNN / GRU / LSTM), so PyTorch weights
// work unchanged. With s the logistic sigmoid and a_x = gx[t] + b_ih (the input part):
//   rnn  (G=1):  h' = tanh(a_x + a_h)            (or relu)
//   gru  (G=3, rows r,z,n):
//                r = s(a_x_r + a_h_r),  z = s(a_x_z + a_h_z),
//                n = tanh(a_x_n + r * a_h_n),   h' = (1 - z) * n + z * h
//   lstm (G=4, rows i,f,g,o):
//                i = s(.), f = s(.), g = tanh(.), o = s(.)   of a_x + a_h
//                c' = f * c + i * g,  h' = o * tanh(c')
// The LSTM state is one tensor (2,B,H): [0] = h, [1] = c, so h is contiguous and the GEMM
// reads it in place. Both biases are inputs of the step (as in torch.lstm_cell): adding b_ih
// here instead of to gx saves a broadcast add over the whole sequence and its backward.
//
// Padded batches: `lengths` (one per batch row, or empty = every row runs) freezes a row once
// t >= lengths[b]: its state is copied through unchanged and no gradient reaches its gates.
// Running t = T-1 .. 0 with the same rule gives the reverse direction of a packed sequence
// (each row starts from the initial state at its own last element).
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/var.h"

namespace attn {

enum class RnnNonlinearity { kTanh, kRelu };

// gx (T,B,H), h (B,H), w_hh (H,H), b_ih (H), b_hh (H) -> h' (B,H)
Var rnn_cell(const Var& gx,
             int64_t t,
             const Var& h,
             const Var& w_hh,
             const Var& b_ih,
             const Var& b_hh,
             RnnNonlinearity nonlinearity = RnnNonlinearity::kTanh,
             const std::vector<int64_t>& lengths = {});

// gx (T,B,3H), h (B,H), w_hh (3H,H), b_ih (3H), b_hh (3H) -> h' (B,H)
Var gru_cell(const Var& gx,
             int64_t t,
             const Var& h,
             const Var& w_hh,
             const Var& b_ih,
             const Var& b_hh,
             const std::vector<int64_t>& lengths = {});

// gx (T,B,4H), state (2,B,H) = [h; c], w_hh (4H,H), b_ih (4H), b_hh (4H)
//   -> state' (2,B,H) = [h'; c']
Var lstm_cell(const Var& gx,
              int64_t t,
              const Var& state,
              const Var& w_hh,
              const Var& b_ih,
              const Var& b_hh,
              const std::vector<int64_t>& lengths = {});

}  // namespace attn
