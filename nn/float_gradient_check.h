// The float directional gradient check a plugin's trainable row passes before anything trains it
// (mixers: nn/mixer/mixer_check.h; feed-forward blocks: nn/feedforward_registry.h). It checks any
// layer given as a function of its input x and the list of its parameters.
//
//   Generator gen(7);
//   auto ff = std::make_shared<nn::FeedForward>(8, 16, nn::Activation::kGELU, gen);
//   nn::FloatGradientCheck c = nn::check_float_gradient(
//       [&](const Var& x) { return ff->forward(x); }, ff->parameters(), {2, 6, 8}, gen,
//       "feed-forward 'gelu'");
//   if (!c.ok) std::puts(c.detail.c_str());   // "direction 2: analytic 0.41, numeric 0.83 ..."
//
// Why float and directional. A plugin is compiled against the installed attnlab's float build
// (attn::real = float: the attnlab executable it is loaded into), so the double-precision
// full-Jacobian check (autograd/gradcheck.h) cannot run on it here; the student proves the
// gradient in double precision with their own program linked to attnlab::attnlab_f64
// (examples/coursework/check_gradients.cpp). This check guards the training run: it draws fixed
// random loss weights w and an input x of x_shape, takes L = sum(w * f(x)) and compares, along 4
// random unit directions v over x and every parameter,
//   analytic  a = grad(L) . v        (one backward pass)
//   numeric   n(h) = (L(p + h v) - L(p - h v)) / (2h),   h = 1e-2, 5e-3, 2.5e-3
// with L summed in double. In float a central difference is noisy: its truncation error falls
// as h^2 and its rounding error grows as 1/h, so the error of one estimate is measured, not
// assumed: the spread of the three estimates (max - min) bounds both parts, and the rounding
// floor eps_float * sum|w y| / h_min (every output off by one ulp) covers estimates that agree
// by chance. The layer passes when |a - n(5e-3)| <= 2 * spread + floor in every direction. A
// correct layer lands far inside: the 12 built-in mixers at 0.03-0.09 of the tolerance
// (tests/experiments/plugin_loader_test.cpp); a wrong backward (a dropped term, a wrong sign)
// is off by the size of a itself (a square that forgets its factor 2: 1186 tolerances).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "autograd/shape.h"
#include "autograd/var.h"

namespace attn::nn {

struct FloatGradientCheck {
  bool ok = false;
  double worst_ratio = 0;    // max over directions of |a - n| / tolerance (passes when <= 1)
  std::string detail;        // the worst direction: analytic, numeric, tolerance; or what failed
  bool wrong_shape = false;  // f(x) did not have x's shape (detail names both shapes)
};

// Runs the check above on f at an input of x_shape. f must be deterministic (put dropout in eval
// mode first) and return x's shape; `what` names it in the detail ("mixer 'softmax'").
// Exceptions from f propagate.
FloatGradientCheck check_float_gradient(const std::function<Var(const Var&)>& f,
                                        const std::vector<Var>& parameters,
                                        const Shape& x_shape,
                                        Generator& gen,
                                        const std::string& what);

}  // namespace attn::nn
