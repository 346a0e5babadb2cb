// Registry rows for elementwise arithmetic and activation functions.
#include "autograd/registry/registry.h"

namespace attn {

std::vector<OpCase> elementwise_cases() {
  std::vector<OpCase> rows;
  rows.push_back({"add_broadcast", "a + b",
                  [](Generator& g) {
                    return std::vector{float_input("a", Tensor::randn({2, 3, 4}, g)),
                                       float_input("b", Tensor::randn({3, 1}, g))};
                  },
                  [](const std::vector<Var>& v) { return add(v[0], v[1]); }});
  return rows;
}

}  // namespace attn
