// Gradcheck rows of the linear-zoo's layers, which have no PyTorch twin: dilated attention
// (mixed dilations per head), PolaFormer's polarity streams with the learnable power map,
// TransNormer's normalised linear attention (the denominator-free prefix sums), the SANA block
// (ReLU linear attention, the causal depthwise convolution, the gated Mix-FFN) and AWRSR's
// simple and additive refinements. Each row perturbs the parameters and checks every leaf.
#include <memory>

#include "nn/attention/dilated_attention.h"
#include "nn/attention/norm_linear_attention.h"
#include "nn/attention/polarity_attention.h"
#include "nn/attention/refined_attention.h"
#include "nn/attention/sana_block.h"
#include "nn/registry/layer_cases.h"

namespace attn::nn {

namespace {

// A row over x (2,T,4) for a module m, output f(m, x).
template <class M, class Make, class Run>
LayerCase module_row(const std::string& name, int64_t t, Make make, Run run) {
  return {name, [t, make, run](Generator& gen) {
            std::shared_ptr<M> m = make(gen);
            perturb_parameters(*m, gen);
            Var x(Tensor::randn({2, t, 4}, gen), true);
            return LayerInstance{m, module_leaves(*m, {x}), [m, x, run] { return run(*m, x); }};
          }};
}

}  // namespace

std::vector<LayerCase> zoo_layer_cases() {
  std::vector<LayerCase> rows;
  rows.push_back(module_row<DilatedAttention>(
      "dilated_attention/mixed_heads", 5,
      [](Generator& g) {
        return std::make_shared<DilatedAttention>(4, 2, 2, std::vector<int64_t>{1, 2}, g);
      },
      [](const DilatedAttention& m, const Var& x) { return m.forward(x).out; }));
  rows.push_back(module_row<PolarityAttention>(
      "polarity_attention/causal", 4,
      [](Generator& g) { return std::make_shared<PolarityAttention>(4, 1, g); },
      [](const PolarityAttention& m, const Var& x) { return m.forward(x); }));
  rows.push_back(module_row<NormLinearAttention>(
      "norm_linear_attention/causal", 4,
      [](Generator& g) { return std::make_shared<NormLinearAttention>(4, 2, g); },
      [](const NormLinearAttention& m, const Var& x) { return m.forward(x); }));
  rows.push_back(module_row<SanaBlock>(
      "sana_block/causal", 4, [](Generator& g) { return std::make_shared<SanaBlock>(4, 2, 3, g); },
      [](const SanaBlock& m, const Var& x) { return m.forward(x); }));
  // A plain pair, not a structured binding: clang 14 (the fuzz build) cannot capture a binding.
  for (const auto& variant :
       {std::pair{"simple", Refinement::kSimple}, std::pair{"additive", Refinement::kAdditive}}) {
    const Refinement kind = variant.second;
    rows.push_back(module_row<RefinedAttention>(
        std::string("refined_attention/") + variant.first, 3,
        [kind](Generator& g) { return std::make_shared<RefinedAttention>(4, 2, 5, 2, kind, g); },
        [](const RefinedAttention& m, const Var& x) { return m.forward(x); }));
  }
  return rows;
}

}  // namespace attn::nn
