// The readouts linear-vs-softmax-recall compares, each a function attend(q, k, v):
//   softmax    nn::scaled_dot_product_attention: softmax(q k^T / sqrt(d_k)) V
//   elu + 1    nn::linear_attention (non-causal): phi(q)^T (sum_j phi(k_j) v_j^T) / phi(q).z
//   polar^p    the same readout with phi(x) = [relu(x)^p, relu(-x)^p] (F = 2 d_k features)
//   each feature map a plugin registered (nn/attention/feature_map_registry.h), read the same way
//
//   std::vector<RecallMethod> ms = recall_methods(/*power=*/3);   // 3 + the plugins' maps
//   Var y = ms[2].attend(keys, keys, values);                      // (1,1,n,d_v)
//   ctx.result("recall_" + ms[2].key, ...);                        // "recall_polar"
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/var.h"

namespace attn::experiments {

struct RecallMethod {
  std::string name;  // in tables and figures: "softmax", "elu + 1", "polar^3", a plugin row's name
  std::string key;   // in results.json keys: softmax, elu, polar, plugin_<row name>
  std::function<Var(const Var& q, const Var& k, const Var& v)> attend;
};

// The three built-in readouts in this order, then one per row of nn::feature_map_registry().
std::vector<RecallMethod> recall_methods(double power);

// Linear attention for any feature map, from its features:
//   fq (B,H,T,F), fk (B,H,S,F), v (B,H,S,M) -> fq (fk^T v) / (fq . sum_s fk_s + eps)  (B,H,T,M).
Var kernel_attention(const Var& fq, const Var& fk, const Var& v);

// phi(x) = [relu(x)^p, relu(-x)^p] on the last axis: x (B,H,T,D) -> (B,H,T,2D).
Var polar_power_features(const Var& x, double p);

}  // namespace attn::experiments
