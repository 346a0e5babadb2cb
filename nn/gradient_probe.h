// Gradient-flow probe: how much gradient reaches each input position of a sequence model.
//
//   attn::Generator gen(0);
//   attn::nn::RNN rnn({.input_size = 8, .hidden_size = 32, .batch_first = true}, gen);
//   attn::Tensor x = attn::Tensor::randn({4, 50, 8}, gen);             // (B,T,C)
//   attn::Tensor u = attn::Tensor::randn({4, 32}, gen);                // a fixed readout
//   attn::nn::GradientProbe p = attn::nn::probe_gradient_flow(x, [&](const attn::Var& xv) {
//     return attn::nn::readout_loss(rnn.forward(xv).y, /*position=*/49, u);
//   });
//   p.norms[t];        // || dloss / dx[:, t, :] ||_2 for every position t
//   p.relative()[t];   // the same divided by the largest, for plotting on a log axis
//
// The loss reads one output position (the last, usually), so norms[t] measures how strongly
// position t can still influence it: for a tanh RNN it shrinks roughly geometrically with the
// distance to that position (each step multiplies by W_hh^T diag(1 - h^2)); gates (GRU, LSTM)
// slow the shrinking; self-attention connects every position to every other in one step, so
// its norms do not fall with distance. The numbers come straight from the tape: one forward,
// one backward, the gradient of the input read out position by position.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "autograd/var.h"

namespace attn::nn {

struct GradientProbe {
  std::vector<double> norms;  // per position t of the time axis
  std::vector<double> relative() const;
};

// x (B,T,C): the input, time on axis `time_axis`; loss_fn maps it (as a leaf requiring a
// gradient) to a scalar. Runs one forward and one backward.
GradientProbe probe_gradient_flow(const Tensor& x,
                                  const std::function<Var(const Var&)>& loss_fn,
                                  int time_axis = 1);

// y (B,T,H), readout (B,H): sum_b <y[b, position, :], readout[b, :]>, a scalar that depends on
// one output position only, through a fixed direction (so no nonlinearity of the loss enters).
Var readout_loss(const Var& y, int64_t position, const Tensor& readout);

}  // namespace attn::nn
