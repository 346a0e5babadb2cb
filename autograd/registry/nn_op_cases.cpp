// Registry rows for the fused network ops: softmax, norms, embedding, dropout, losses.
#include "autograd/registry/registry.h"

namespace attn {

std::vector<OpCase> nn_op_cases() {
  std::vector<OpCase> rows;
  rows.push_back({"softmax", "torch.softmax(x, -1)",
                  [](Generator& g) {
                    return std::vector{float_input("x", Tensor::randn({2, 3, 5}, g, 2.0))};
                  },
                  [](const std::vector<Var>& v) { return softmax(v[0]); }});
  return rows;
}

}  // namespace attn
