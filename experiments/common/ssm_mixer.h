// The S6 (Mamba) token mixer for MixerModel: nn::SelectiveSSM in the mixer slot, so the
// selective-ssm and triangle-tradeoff experiments compare it with attention in one body.
//
//   MixerModel m(opts, [&](int64_t, Generator& g) { return s6_mixer(32, 16, g); }, gen);
//   Mixer fast = s6_mixer(32, 16, gen, {.scan = nn::SsmScan::kChunked});    // force a scan
//   int64_t bytes = s6_state_bytes(32, 16);   // decoding state per sequence, per layer
//
// The mixer is causal (position t reads positions <= t). While decoding it keeps a fixed-size
// state per sequence: the SSM state h (E,N) and the convolution's last d_conv-1 inputs (E each),
// E = expand d_model, however long the sequence already is (a KV cache grows with T instead).
#pragma once

#include <cstdint>

#include "autograd/generator.h"
#include "experiments/common/mixer_model.h"
#include "nn/ssm/selective_ssm.h"

namespace attn::experiments {

struct S6MixerOptions {
  int64_t expand = 2;                     // E = expand * d_model channels
  nn::SsmScan scan = nn::SsmScan::kAuto;  // auto: chunked on the fast path, sequential in ref.
  int64_t chunk = 64;                     // time steps per chunk of the chunked scan
  int64_t d_conv = 4;                     // causal convolution kernel
};

Mixer s6_mixer(int64_t d_model, int64_t d_state, Generator& gen, const S6MixerOptions& o = {});

// Bytes of float32 decoding state one sequence needs in one S6 layer:
// 4 ((d_conv-1) E + E d_state). Equal to SelectiveSSM::state_numel_per_sequence() * 4.
int64_t s6_state_bytes(int64_t d_model, int64_t d_state, const S6MixerOptions& o = {});

}  // namespace attn::experiments
