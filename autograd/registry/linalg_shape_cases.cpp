// Registry rows for matmul and the shape ops (reshape, transpose, permute, concat, ...).
#include "autograd/registry/registry.h"

namespace attn {

std::vector<OpCase> linalg_shape_cases() {
  std::vector<OpCase> rows;
  auto mm = [&](std::string name, Shape sa, Shape sb, bool ta, bool tb, std::string torch) {
    rows.push_back({std::move(name), std::move(torch),
                    [sa, sb](Generator& g) {
                      return std::vector{float_input("a", Tensor::randn(sa, g)),
                                         float_input("b", Tensor::randn(sb, g))};
                    },
                    [ta, tb](const std::vector<Var>& v) { return matmul(v[0], v[1], ta, tb); }});
  };
  mm("matmul_2d", {3, 4}, {4, 5}, false, false, "a @ b");
  mm("matmul_2d_ta", {4, 3}, {4, 5}, true, false, "a.mT @ b");
  mm("matmul_2d_tb", {3, 4}, {5, 4}, false, true, "a @ b.mT");
  mm("matmul_2d_ta_tb", {4, 3}, {5, 4}, true, true, "a.mT @ b.mT");
  mm("matmul_batched3", {2, 3, 4}, {2, 4, 5}, false, false, "a @ b");
  mm("matmul_batched4_tb", {2, 2, 3, 4}, {2, 2, 5, 4}, false, true, "a @ b.mT");
  mm("matmul_batched3_ta", {2, 4, 3}, {2, 4, 5}, true, false, "a.mT @ b");
  mm("matmul_shared_b", {2, 3, 4}, {4, 5}, false, false, "a @ b");
  mm("matmul_shared_b_tb", {2, 3, 4}, {5, 4}, false, true, "a @ b.mT");
  mm("matmul_shared_b_ta", {2, 4, 3}, {4, 5}, true, false, "a.mT @ b");
  return rows;
}

}  // namespace attn
