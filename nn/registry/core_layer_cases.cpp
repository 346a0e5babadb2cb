// nn-core's gradcheck rows that have no parity twin: dropout in training mode, attention with
// an additive bias and without scaling, and the stacks (whose inputs are token ids).
#include <memory>

#include "nn/dropout.h"
#include "nn/registry/layer_cases.h"

namespace attn::nn {

std::vector<LayerCase> core_layer_cases() {
  std::vector<LayerCase> rows;

  // Training-mode dropout is deterministic once its generator is rewound before every call,
  // which is exactly how a resumed run replays the masks of a checkpointed one.
  rows.push_back({"dropout/train", [](Generator& gen) {
                    auto rng = std::make_shared<Generator>(7);
                    const std::string start = rng->state();
                    auto m = std::make_shared<Dropout>(0.3, rng);
                    m->train();
                    Var x(Tensor::randn({2, 3, 4}, gen), true);
                    LayerInstance out;
                    out.keep_alive = m;
                    out.leaves = {x};
                    out.forward = [m, rng, start, x] {
                      rng->set_state(start);
                      return m->forward(x);
                    };
                    return out;
                  }});
  return rows;
}

}  // namespace attn::nn
