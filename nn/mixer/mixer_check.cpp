#include "nn/mixer/mixer_check.h"

#include <fmt/format.h>

namespace attn::nn {

MixerCheck check_mixer_gradient(const MixerRow& row, uint64_t seed) {
  const MixerShape shape{.d_model = 8, .nhead = 2, .max_len = 8, .layers = 1, .window = 2};
  Generator gen(seed);
  const Mixer mixer = row.make(shape, 0, gen);
  std::vector<Var> parameters;
  if (mixer.module) {
    mixer.module->eval();  // dropout off: the loss must be a function
    parameters = mixer.module->parameters();
  }
  return check_float_gradient(mixer.forward, parameters, {2, 6, shape.d_model}, gen,
                              fmt::format("mixer '{}'", row.name));
}

}  // namespace attn::nn
