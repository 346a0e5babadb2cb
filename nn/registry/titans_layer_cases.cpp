// Gradcheck rows of the Titans layers without a parity twin: memory as context with the deep
// (MLP) memory, memory as a gate and memory as a layer (nn/attention/titans_variants.h), each
// with the linear and the deep memory. T = 5 in segments of 2: two memory writes (the second with
// momentum) before the last read, so each Jacobian passes through the memory's test-time
// gradient steps (for the deep memory, through the closed-form MLP gradients).
#include <memory>

#include "nn/attention/titans_memory.h"
#include "nn/attention/titans_variants.h"
#include "nn/registry/layer_cases.h"

namespace attn::nn {

namespace {

template <class Layer, class Options>
LayerCase titans_case(const std::string& name, Options o) {
  return {name, [o](Generator& gen) {
            auto m = std::make_shared<Layer>(o, gen);
            perturb_parameters(*m, gen);
            Var x(Tensor::randn({2, 5, 4}, gen), true);
            return LayerInstance{m, module_leaves(*m, {x}), [m, x] { return m->forward(x); }};
          }};
}

TitansHybridOptions hybrid(int64_t depth) {
  return {.d_model = 4,
          .nhead = 2,
          .segment = 2,
          .window = 1,
          .memory_depth = depth,
          .memory_hidden = 3};
}

}  // namespace

std::vector<LayerCase> titans_layer_cases() {
  return {
      titans_case<TitansMemoryAttention>("titans_mac/deep_seg2", TitansOptions{.d_model = 4,
                                                                               .nhead = 2,
                                                                               .segment = 2,
                                                                               .persistent = 1,
                                                                               .memory_depth = 2,
                                                                               .memory_hidden = 3}),
      titans_case<TitansGateAttention>("titans_mag/linear_seg2", hybrid(1)),
      titans_case<TitansGateAttention>("titans_mag/deep_seg2", hybrid(2)),
      titans_case<TitansLayerAttention>("titans_mal/linear_seg2", hybrid(1)),
      titans_case<TitansLayerAttention>("titans_mal/deep_seg2", hybrid(2))};
}

}  // namespace attn::nn
