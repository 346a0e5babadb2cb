// The selective scan written out in elementary ops, one time step after another: the textbook
// (reference) path of nn::SelectiveSSM and the step of its recurrent decoding.
//
//   Var y = attn::nn::selective_scan_sequential(u, delta, a, b, c, d);   // the whole sequence
//   Var h = attn::nn::zero_scan_state(batch, a);                         // decoding:
//   Var y_t = attn::nn::selective_scan_step(u_t, delta_t, a, b_t, c_t, h);  // h moves on
//
// Per step t, with h (B,E,N) (E channels, N state entries per channel, A diagonal):
//   A_bar_t = exp(delta_t A)                 exp(mul(delta_t (B,E,1), A (E,N)))   (B,E,N)
//   h_t     = A_bar_t * h_{t-1} + (delta_t u_t) B_t
//                                            add(mul(A_bar_t, h), mul(mul(delta_t, u_t), B_t))
//   y_t     = C_t . h_t                      matmul(h_t (B,E,N), C_t (B,N,1))      (B,E,1)
// and after the loop y = concat_t(y_t) + D u. In a tape print each step reads as
// slice/reshape, mul, exp, mul, mul, mul, add, matmul: the student's recurrence, as written.
// The fused op attn::selective_scan (autograd/ops/fused/selective_scan.cpp) computes the same
// values and gradients in one record; tests/nn/ssm/selective_ssm_test.cpp proves it.
#pragma once

#include <cstdint>

#include "autograd/var.h"

namespace attn::nn {

// u, delta (B,T,E), a (E,N), b, c (B,T,N), d (E) -> y (B,T,E), from h_0 = 0.
Var selective_scan_sequential(
    const Var& u, const Var& delta, const Var& a, const Var& b, const Var& c, const Var& d);

// The state before the first step: zeros (B,E,N) for a (E,N).
Var zero_scan_state(int64_t batch, const Var& a);

// One step: u_t, delta_t (B,1,E), b_t, c_t (B,1,N), a (E,N); h (B,E,N) is h_{t-1} on entry and
// h_t on return. Returns C_t . h_t (B,1,E), without the D u_t skip.
Var selective_scan_step(
    const Var& u_t, const Var& delta_t, const Var& a, const Var& b_t, const Var& c_t, Var& h);

}  // namespace attn::nn
