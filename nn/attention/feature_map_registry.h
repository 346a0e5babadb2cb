// The open registry of linear attention's feature maps: a map phi turns a query or a key into F
// non-negative features, and linear attention reads
//   y_i = phi(q_i)^T [sum_j phi(k_j) v_j^T] / (phi(q_i) . sum_j phi(k_j)),
// so phi(q).phi(k) stands where softmax has exp(q.k / sqrt(d)). A student adds rows from a shared
// library (nn/mixer/plugin.h, registry.add_feature_map) and runs them beside the built-in
// readouts: `attnlab run linear-vs-softmax-recall --plugin FILE.so`.
//
//   nn::feature_map_registry().add({.name = "relu-squared", .source = "my coursework",
//                                   .idea = "relu(x)^2",
//                                   .phi = [](const Var& x) { return pow(relu(x), 2); }});
//   Var f = nn::feature_map_of(*nn::feature_map_registry().find("relu-squared"), k);
//
// Why the checks in feature_map_of. The readout divides by phi(q) . sum_j phi(k_j): with features
// that may be negative that sum can pass through 0 and the answer through infinity, so a negative
// or non-finite feature is refused, naming the row and the entry, instead of becoming a NaN in a
// table. A map must keep the leading axes (one feature vector per query or key); F is its own.
// The names attnlab's own readouts go by (softmax, elu, polar) are reserved.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/var.h"

namespace attn::nn {

struct FeatureMapRow {
  std::string name;    // as it appears in tables and results.json keys, e.g. "relu-squared"
  std::string source;  // where the map comes from (a paper, the student's own words)
  std::string idea;    // one line for a report's table
  // phi: x (..., D) -> (..., F), F >= 1, every entry finite and >= 0. Built from tape ops, so its
  // gradient is the tape's; it has no parameters of its own (a map that learns is a mixer).
  std::function<Var(const Var& x)> phi;
  std::string origin;  // "" for a built-in; the plugin file that added the row
};

class FeatureMapRegistry {
 public:
  // Adds a row. Throws attn::UsageError when the name is not a plain word ([A-Za-z0-9_.-]), is a
  // reserved or another row's name (ignoring case), or the row has no .phi.
  void add(FeatureMapRow row);
  const FeatureMapRow* find(const std::string& name) const;  // exact name, or nullptr
  const std::vector<FeatureMapRow>& rows() const { return rows_; }

 private:
  std::vector<FeatureMapRow> rows_;
};

// The names of attnlab's own linear-attention readouts, which no row may take.
const std::vector<std::string>& reserved_feature_map_names();

// The process's registry (empty until a plugin loads).
FeatureMapRegistry& feature_map_registry();

// row.phi(x), checked: the same leading axes as x, a last axis >= 1, every entry finite and >= 0.
// Throws attn::Error naming the row and the shapes, or the first bad entry.
Var feature_map_of(const FeatureMapRow& row, const Var& x);

}  // namespace attn::nn
