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
  row_names::Reserved reserved;
  for (const std::string& own : reserved_feature_map_names())
    reserved.emplace_back(own, fmt::format("attnlab's own '{}' readout", own));
  row_names::check_new_row("feature map", row, static_cast<bool>(row.phi), "has no map (.phi)",
                           reserved, rows_);
  rows_.push_back(std::move(row));
}

const FeatureMapRow* FeatureMapRegistry::find(const std::string& name) const {
  return row_names::find_row(rows_, name);
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
