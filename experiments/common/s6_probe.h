// What a trained S6 layer selects: its step size Delta per token, read out of a MixerModel whose
// first block's mixer is an nn::SelectiveSSM (experiments/common/ssm_mixer.h).
//
//   Tensor delta = first_layer_delta(model, ids);   // ids (B,T) -> (B,T,E): Delta_t per channel
//
// Delta is recomputed from the model's own modules, exactly as the forward pass computes it:
//   h     = LN_0(tok(ids) + PE)                       the first block's mixer input
//   x     = in_proj(h)[..., :E]
//   u     = SiLU(conv1d(x))
//   Delta = softplus(dt_proj(x_proj(u)[..., :R]))     (B,T,E)
// A large Delta_t makes A_bar_t = exp(Delta_t A) small (the state forgets and takes in token t:
// B_bar_t = Delta_t B_t); a small one keeps the state and lets the token pass unrecorded.
#pragma once

#include "autograd/tensor.h"
#include "experiments/common/mixer_model.h"

namespace attn::experiments {

// Throws attn::Error when the first block's mixer is not an nn::SelectiveSSM.
Tensor first_layer_delta(const MixerModel& m, const Tensor& ids);

}  // namespace attn::experiments
