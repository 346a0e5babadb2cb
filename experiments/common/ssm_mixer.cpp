#include "experiments/common/ssm_mixer.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {
nn::SelectiveSsmOptions layer_options(int64_t d_state, const S6MixerOptions& o) {
  nn::SelectiveSsmOptions so;
  so.d_state = d_state;
  so.d_conv = o.d_conv;
  so.expand = o.expand;
  so.scan = o.scan;
  so.chunk = o.chunk;
  return so;
}
}  // namespace

Mixer s6_mixer(int64_t d_model, int64_t d_state, Generator& gen, const S6MixerOptions& o) {
  auto ssm = std::make_shared<nn::SelectiveSSM>(d_model, gen, layer_options(d_state, o));
  return {ssm, [ssm](const Var& x) { return ssm->forward(x); }};
}

int64_t s6_state_bytes(int64_t d_model, int64_t d_state, const S6MixerOptions& o) {
  const int64_t e = o.expand * d_model;
  return static_cast<int64_t>(sizeof(float)) * ((o.d_conv - 1) * e + e * d_state);
}

}  // namespace attn::experiments
