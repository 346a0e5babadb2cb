#include "experiments/efficient/recall_methods.h"

#include <fmt/format.h>

#include "autograd/functional.h"
#include "nn/attention/feature_map_registry.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/sdpa.h"

namespace attn::experiments {

namespace {
constexpr real kEps = 1e-6f;  // nn::linear_attention's default denominator guard
}  // namespace

Var polar_power_features(const Var& x, double p) {
  const auto pr = static_cast<real>(p);
  return concat({pow(relu(x), pr), pow(relu(neg(x)), pr)}, 3);
}

Var kernel_attention(const Var& fq, const Var& fk, const Var& v) {
  Var state = matmul(fk, v, true, false);  // (B,H,F,M): the fast-weight memory
  Var z = sum(fk, 2, true);                // (B,H,1,F)
  return div(matmul(fq, state), add_scalar(matmul(fq, z, false, true), kEps));
}

std::vector<RecallMethod> recall_methods(double power) {
  std::vector<RecallMethod> ms{
      {"softmax", "softmax",
       [](const Var& q, const Var& k, const Var& v) {
         return nn::scaled_dot_product_attention(q, k, v).out;
       }},
      {"elu + 1", "elu",
       [](const Var& q, const Var& k, const Var& v) {
         return nn::linear_attention(q, k, v, false);
       }},
      {fmt::format("polar^{}", power), "polar", [power](const Var& q, const Var& k, const Var& v) {
         return kernel_attention(polar_power_features(q, power), polar_power_features(k, power), v);
       }}};
  // A plugin's map is read exactly as the power map is, its features checked on every call.
  for (const nn::FeatureMapRow& row : nn::feature_map_registry().rows())
    ms.push_back({row.name, "plugin_" + row.name, [row](const Var& q, const Var& k, const Var& v) {
                    return kernel_attention(nn::feature_map_of(row, q), nn::feature_map_of(row, k),
                                            v);
                  }});
  return ms;
}

}  // namespace attn::experiments
