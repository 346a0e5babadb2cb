// The plugin: GatedAttention as a row of attnlab's mixer registry. Built as a MODULE library
// (CMakeLists.txt) and loaded by `--plugin`:
//
//   attnlab list --plugin build/libgated_attention.so          # the row, its gradient check
//   attnlab run attention-zoo --quick --plugin build/libgated_attention.so
//   attnlab train copy --model mixer --mixer gated-softmax --plugin build/libgated_attention.so
//
// The loader gradient-checks the row before anything trains it; check_gradients proves the
// same layer in double precision.
#include <memory>

#include <attnlab/nn/mixer/plugin.h>

#include "gated_attention.h"

ATTN_PLUGIN(coursework_gated_attention) {
  registry.add_mixer(
      {.name = "gated-softmax",
       .source = "coursework (gated attention)",
       .idea = "softmax attention times a sigmoid gate the token computes: O(T^2)",
       .causal = true,
       .make = [](const attn::nn::MixerShape& s, int64_t, attn::Generator& gen) {
         auto m = std::make_shared<coursework::GatedAttention>(s.d_model, s.nhead, gen);
         return attn::nn::Mixer{m, [m](const attn::Var& x) { return m->forward(x); }};
       }});
}
