// What a causal token mixer must keep between decoding steps, measured from the real state
// tensors while a stack of mixers decodes one token at a time.
//
//   Generator gen(0);
//   DecodingTrace s = decode_softmax(/*d_model=*/32, /*nhead=*/2, /*layers=*/2, /*steps=*/64, gen);
//   s.state_bytes[t - 1];   // bytes of every layer's KV cache after t tokens
//   s.max_abs_diff;         // last step's output against the parallel (training) form: ~1e-6
//
// Each function builds `layers` mixers of one kind (fresh weights; the state's size does not
// depend on them), feeds `steps` random inputs x_1..x_T (B = 1) through the stack one position at
// a time, each layer's step output being the next layer's input, and after every step adds up the
// bytes of the tensors the stack keeps for the next step:
//   softmax: the KV cache of nn::MultiheadAttention, K and V (1,H,t,D) per layer; grows by
//            2 d_model floats per layer and token:   bytes(t) = 2 L d t * 4
//   window:  the same cache cut to the last w positions (a query at t reads t-w..t only):
//            bytes(t) = 2 L d min(t, w) * 4
//   linear:  nn::FastWeightState, S (1,H,D,D) and z (1,H,1,D) per layer, whatever t:
//            bytes(t) = L H (D^2 + D) * 4,  D = d / H
//   S6:      nn::SelectiveSsmState, h (1,E,N) and the convolution's last d_conv - 1 inputs
//            (1,d_conv-1,E) per layer, whatever t:   bytes(t) = L (E N + (d_conv - 1) E) * 4
//            (experiments/common/ssm_mixer.h's s6_state_bytes per layer)
// The decoded outputs are checked against the parallel form of the same stack on the whole
// sequence (max_abs_diff over the last position), which proves the step functions compute what
// training computes: the states measured are the ones the trained models would use.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/generator.h"
#include "experiments/common/ssm_mixer.h"

namespace attn::experiments {

struct DecodingTrace {
  std::vector<int64_t> state_bytes;  // [t - 1]: after t tokens
  double max_abs_diff = 0;           // decoded vs parallel output, all positions of the last layer
};

DecodingTrace decode_softmax(
    int64_t d_model, int64_t nhead, int64_t layers, int64_t steps, Generator& gen);
DecodingTrace decode_window(
    int64_t d_model, int64_t nhead, int64_t window, int64_t layers, int64_t steps, Generator& gen);
DecodingTrace decode_linear(
    int64_t d_model, int64_t nhead, int64_t layers, int64_t steps, Generator& gen);
// S6 layers built as experiments/common/ssm_mixer.h's s6_mixer(d_model, d_state, gen, options).
DecodingTrace decode_s6(int64_t d_model,
                        int64_t d_state,
                        const S6MixerOptions& options,
                        int64_t layers,
                        int64_t steps,
                        Generator& gen);

// The closed forms above, in bytes after t tokens (4-byte floats).
int64_t softmax_state_bytes(int64_t d_model, int64_t layers, int64_t t);
int64_t window_state_bytes(int64_t d_model, int64_t window, int64_t layers, int64_t t);
int64_t linear_state_bytes(int64_t d_model, int64_t nhead, int64_t layers);

}  // namespace attn::experiments
