// Gradcheck rows of the fine-tuning layers (nn/finetune/), which have no PyTorch twin: SVF's z
// (own and mixed z-vectors) and LoRA's two factors, each with the input as a leaf too.
#include <memory>

#include "nn/finetune/lora_linear.h"
#include "nn/finetune/svf_linear.h"
#include "nn/registry/layer_cases.h"

namespace attn::nn {

std::vector<LayerCase> finetune_layer_cases() {
  std::vector<LayerCase> rows;

  // A wide (4 -> 6) base with a bias: z has min(6, 4) = 4 entries; tanh makes the output
  // non-linear in z (x V and U are fixed, so y alone is linear in z).
  rows.push_back(
      {"svf_linear/own_z", [](Generator& gen) {
         const Linear base(4, 6, true, gen);
         auto m = std::make_shared<SvfLinear>(base);
         perturb_parameters(*m, gen);
         Var x(Tensor::randn({2, 3, 4}, gen), true);
         return LayerInstance{m, module_leaves(*m, {x}), [m, x] { return tanh(m->forward(x)); }};
       }});

  // Transformer²'s second pass: two z-vectors mixed, 0.3 z1 + 0.7 z2, on a tall (5 -> 3) base
  // without a bias.
  rows.push_back({"svf_linear/mixed_z", [](Generator& gen) {
                    const Linear base(5, 3, false, gen);
                    auto m = std::make_shared<SvfLinear>(base);
                    Var z1(Tensor::randn({3}, gen), true);
                    Var z2(Tensor::randn({3}, gen), true);
                    Var x(Tensor::randn({2, 5}, gen), true);
                    return LayerInstance{m, {z1, z2, x}, [m, z1, z2, x] {
                                           const Var z =
                                               add(mul_scalar(z1, 0.3), mul_scalar(z2, 0.7));
                                           return tanh(m->forward_with(x, z));
                                         }};
                  }});

  rows.push_back(
      {"lora_linear/rank_2", [](Generator& gen) {
         const Linear base(4, 5, true, gen);
         auto m = std::make_shared<LoraLinear>(base, 2, 3.0, gen);
         perturb_parameters(*m, gen);  // B != 0, so A's gradient is not zero
         Var x(Tensor::randn({2, 3, 4}, gen), true);
         return LayerInstance{m, module_leaves(*m, {x}), [m, x] { return tanh(m->forward(x)); }};
       }});
  return rows;
}

}  // namespace attn::nn
