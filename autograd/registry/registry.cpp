#include "autograd/registry/registry.h"

#include <set>

#include "autograd/error.h"

namespace attn {

CaseInput float_input(std::string name, Tensor value) {
  return {std::move(name), std::move(value), InputKind::kFloat, true};
}

CaseInput index_input(std::string name, Tensor value) {
  return {std::move(name), std::move(value), InputKind::kIndex, false};
}

Tensor dropout_keep_mask(const Shape& shape, real p, uint64_t seed) {
  Generator fresh(seed);
  NoGrad off;
  Tensor kept = dropout(Var::constant(Tensor::ones(shape)), p, fresh, true).value();
  for (int64_t i = 0; i < kept.numel(); ++i) kept[i] = kept[i] != 0 ? 1 : 0;
  return kept;
}

CaseInput mask_input(std::string name, Tensor value) {
  return {std::move(name), std::move(value), InputKind::kMask, false};
}

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> all = [] {
    std::vector<OpCase> rows;
    for (auto table :
         {elementwise_cases, reduction_cases, linalg_shape_cases, nn_op_cases, recurrent_op_cases,
          attention_op_cases, fused_attention_op_cases, ssm_op_cases})
      for (OpCase& c : table()) rows.push_back(std::move(c));
    std::set<std::string> seen;
    for (const OpCase& c : rows)
      if (!seen.insert(c.name).second)
        throw Error("op registry: duplicate row name '" + c.name + "'");
    return rows;
  }();
  return all;
}

}  // namespace attn
