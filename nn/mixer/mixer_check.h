// The gradient check a mixer row passes before anything trains it (the plugin loader runs it on
// every row a plugin adds; `attnlab list --plugin` shows the result).
//
//   nn::MixerCheck c = nn::check_mixer_gradient(*nn::mixer_registry().find("softmax"));
//   if (!c.ok) std::puts(c.detail.c_str());   // "direction 2: analytic 0.41 numeric 0.83 ..."
//
// The check itself (float, directional, its tolerance and why) is nn/float_gradient_check.h; here
// the mixer is built at a small shape (B=2, T=6, d_model=8, 2 heads) in eval mode and checked
// over its input and every parameter.
#pragma once

#include <cstdint>
#include <string>

#include "nn/float_gradient_check.h"
#include "nn/mixer/mixer_registry.h"

namespace attn::nn {

using MixerCheck = FloatGradientCheck;

// Builds the row's mixer (layer 0) at the small shape and runs the check above. Exceptions from
// the row's factory or forward propagate (the caller names the row and its plugin file); a wrong
// output shape is a failed check.
MixerCheck check_mixer_gradient(const MixerRow& row, uint64_t seed = 7);

}  // namespace attn::nn
