#include "nn/attention/feature_map_registry.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/shape.h"
#include "nn/row_names.h"

namespace attn::nn {

const std::vector<std::string>& reserved_feature_map_names() {
  // softmax: the exact kernel exp(q.k / sqrt(d)); elu: elu + 1 (nn::elu_feature_map, Katharopoulos
  // et al. 2020); polar: PolaFormer's sign split. linear-vs-softmax-recall's results use them.
  static const std::vector<std::string> names{"softmax", "elu", "polar"};
  return names;
}

void FeatureMapRegistry::add(FeatureMapRow row) {
  using row_names::lowered;
  if (!row_names::valid(row.name))
    throw UsageError(fmt::format(
        "feature map name '{}' must be non-empty and use only letters, digits, '_', '-' and '.'",
        row_names::shown(row.name)));
  if (!row.phi) throw UsageError(fmt::format("feature map '{}' has no map (.phi)", row.name));
  for (const std::string& reserved : reserved_feature_map_names())
    if (reserved == lowered(row.name))
      throw UsageError(
          fmt::format("feature map name '{}' is taken (attnlab's own '{}' readout); choose another",
                      row.name, reserved));
  for (const FeatureMapRow& r : rows_)
    if (lowered(r.name) == lowered(row.name))
      throw UsageError(
          fmt::format("feature map name '{}' is taken (feature map '{}', {}); choose "
                      "another",
                      row.name, r.name, row_names::origin_text(r.origin)));
  rows_.push_back(std::move(row));
}

const FeatureMapRow* FeatureMapRegistry::find(const std::string& name) const {
  for (const FeatureMapRow& r : rows_)
    if (r.name == name) return &r;
  return nullptr;
}

FeatureMapRegistry& feature_map_registry() {
  static auto* registry = new FeatureMapRegistry;  // never destroyed: rows hold plugins' code
  return *registry;
}

Var feature_map_of(const FeatureMapRow& row, const Var& x) {
  const Var f = row.phi(x);
  const Shape& in = x.shape();
  const Shape& out = f.shape();
  bool same_lead = out.size() == in.size() && out.back() >= 1;
  for (size_t a = 0; same_lead && a + 1 < in.size(); ++a) same_lead = out[a] == in[a];
  if (!same_lead)
    throw Error(fmt::format(
        "feature map '{}': maps x {} to {}; it must keep every axis but the last and give at "
        "least one feature",
        row.name, shape_str(in), shape_str(out)));
  const Tensor& v = f.value();
  for (int64_t i = 0; i < v.numel(); ++i)
    if (!std::isfinite(v[i]) || v[i] < 0)
      throw Error(fmt::format(
          "feature map '{}': feature {} of {} is {}; features must be finite and >= 0 (linear "
          "attention divides by phi(q) . sum_j phi(k_j))",
          row.name, i, shape_str(out), v[i]));
  return f;
}

}  // namespace attn::nn
