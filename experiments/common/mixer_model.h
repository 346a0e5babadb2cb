// The experiments' name for nn/mixer/mixer_model.h: MixerModel and its mixers moved to nn/ so
// that `attnlab train --model mixer` (train/run/) and a student's plugin (nn/mixer/plugin.h) can
// use them too. Experiments keep writing `MixerModel`, `softmax_mixer`, ... unqualified.
//
//   MixerModel m({.vocab = 12, .max_len = 64, .classes = 10},
//                [&](int64_t, Generator& g) { return softmax_mixer(32, 2, true, g); }, gen);
#pragma once

#include "nn/mixer/mixer_model.h"

namespace attn::experiments {

using nn::linear_mixer;
using nn::Mixer;
using nn::MixerBlock;
using nn::MixerFactory;
using nn::MixerModel;
using nn::MixerModelOptions;
using nn::softmax_mixer;
using nn::window_mixer;

}  // namespace attn::experiments
