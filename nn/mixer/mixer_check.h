// The gradient check a mixer row passes before anything trains it (the plugin loader runs it on
// every row a plugin adds; `attnlab list --plugin` shows the result).
//
//   nn::MixerCheck c = nn::check_mixer_gradient(*nn::mixer_registry().find("softmax"));
//   if (!c.ok) std::puts(c.detail.c_str());   // "direction 2: analytic 0.41 numeric 0.83 ..."
//
// Why float and directional. A plugin is compiled against the installed attnlab's float build
// (attn::real = float: the attnlab executable it is loaded into), so the double-precision
// full-Jacobian check (autograd/gradcheck.h) cannot run on it here; the student proves the
// gradient in double precision with their own program linked to attnlab::attnlab_f64
// (examples/coursework/check_gradients.cpp). This check guards the training run: it builds the
// mixer at a small shape (B=2, T=6, d_model=8, 2 heads), takes the loss L = sum(w * mixer(x))
// with fixed random w, and compares along 4 random unit directions v over x and every parameter
//   analytic  a = grad(L) . v        (one backward pass)
//   numeric   n(h) = (L(p + h v) - L(p - h v)) / (2h),   h = 1e-2, 5e-3, 2.5e-3
// with L summed in double. In float a central difference is noisy: its truncation error falls
// as h^2 and its rounding error grows as 1/h, so the error of one estimate is measured, not
// assumed: the spread of the three estimates (max - min) bounds both parts, and the rounding
// floor eps_float * sum|w y| / h_min (every output off by one ulp) covers estimates that agree
// by chance. The row passes when |a - n(5e-3)| <= 2 * spread + floor in every direction. A
// correct mixer lands far inside: the 12 built-in mixers at 0.03-0.09 of the tolerance
// (tests/experiments/plugin_loader_test.cpp); a wrong backward (a dropped term, a wrong sign)
// is off by the size of a itself (a square that forgets its factor 2: 1186 tolerances).
#pragma once

#include <cstdint>
#include <string>

#include "nn/mixer/mixer_registry.h"

namespace attn::nn {

struct MixerCheck {
  bool ok = false;
  double worst_ratio = 0;  // max over directions of |a - n| / tolerance (passes when <= 1)
  std::string detail;      // the worst direction: analytic, numeric, tolerance; or what failed
};

// Builds the row's mixer (layer 0) at the small shape and runs the check above. Exceptions from
// the row's factory or forward propagate (the caller names the row and its plugin file); a wrong
// output shape is a failed check.
MixerCheck check_mixer_gradient(const MixerRow& row, uint64_t seed = 7);

}  // namespace attn::nn
