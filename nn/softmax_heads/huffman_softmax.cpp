#include "nn/softmax_heads/huffman_softmax.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <utility>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

HuffmanSoftmax::HuffmanSoftmax(int64_t in_features,
                               const std::vector<double>& counts,
                               Generator& gen)
    : Module("HuffmanSoftmax"), in_(in_features) {
  const auto v = static_cast<int64_t>(counts.size());
  if (v < 2) throw Error(fmt::format("HuffmanSoftmax: needs at least 2 classes, got {}", v));
  for (size_t i = 0; i < counts.size(); ++i)
    if (!(counts[i] > 0))
      throw Error(fmt::format("HuffmanSoftmax: count {} of class {} must be > 0", counts[i], i));
  // Huffman: merge the two lightest subtrees until one is left. Leaves are 0..V-1, inner nodes
  // V..2V-2 in order of creation (the root last); ties go to the lower id, so the tree is
  // deterministic. The first child popped gets sign +1, the second -1.
  using Item = std::pair<double, int64_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  for (int64_t i = 0; i < v; ++i) heap.emplace(counts[static_cast<size_t>(i)], i);
  std::vector<int64_t> parent(static_cast<size_t>(2 * v - 1), -1);
  std::vector<real> sign(static_cast<size_t>(2 * v - 1), 0);
  for (int64_t next = v; heap.size() > 1; ++next) {
    const Item a = heap.top();
    heap.pop();
    const Item b = heap.top();
    heap.pop();
    parent[static_cast<size_t>(a.second)] = next;
    parent[static_cast<size_t>(b.second)] = next;
    sign[static_cast<size_t>(a.second)] = 1;
    sign[static_cast<size_t>(b.second)] = -1;
    heap.emplace(a.first + b.first, next);
  }
  paths_.resize(static_cast<size_t>(v));
  for (int64_t leaf = 0; leaf < v; ++leaf) {
    std::vector<Step>& path = paths_[static_cast<size_t>(leaf)];
    for (int64_t n = leaf; parent[static_cast<size_t>(n)] >= 0; n = parent[static_cast<size_t>(n)])
      path.push_back({parent[static_cast<size_t>(n)] - v, sign[static_cast<size_t>(n)]});
    std::reverse(path.begin(), path.end());  // root first
    max_depth_ = std::max(max_depth_, static_cast<int64_t>(path.size()));
  }
  const double bound = 1 / std::sqrt(static_cast<double>(in_features));
  weight = register_parameter("weight", Tensor::rand({v - 1, in_features}, gen, -bound, bound));
}

Var HuffmanSoftmax::target_log_prob(const Var& h, const Tensor& targets) const {
  const int64_t n = h.value().rank() == 2 ? h.value().shape()[0] : -1;
  if (n < 1 || h.value().shape()[1] != in_ || targets.numel() != n)
    throw Error(fmt::format("HuffmanSoftmax: h must be (N, {}) and targets (N), got {} and {}", in_,
                            shape_str(h.value().shape()), shape_str(targets.shape())));
  int64_t len = 1;
  for (int64_t r = 0; r < n; ++r) {
    const auto t = static_cast<int64_t>(targets[r]);
    if (t < 0 || t >= classes() || static_cast<real>(t) != targets[r])
      throw Error(fmt::format("HuffmanSoftmax: target {} of row {} is not a class id in [0, {})",
                              targets[r], r, classes()));
    len = std::max(len, depth(t));
  }
  // Paths padded to the longest one in the batch: (N, L) node ids, signs and a 0/1 validity.
  Tensor nodes = Tensor::zeros({n, len}), signs = Tensor::zeros({n, len});
  for (int64_t r = 0; r < n; ++r) {
    const std::vector<Step>& path = paths_[static_cast<size_t>(targets[r])];
    for (size_t k = 0; k < path.size(); ++k) {
      nodes[r * len + static_cast<int64_t>(k)] = static_cast<real>(path[k].node);
      signs[r * len + static_cast<int64_t>(k)] = path[k].sign;
    }
  }
  // z_rk = h_r . w_(n_rk), a_rk = s_rk z_rk, log sigma(a) = -softplus(-a); padding has s = 0,
  // so it is multiplied away by the validity |s|.
  const Var z = sum(mul(embedding(weight, nodes), reshape(h, {n, 1, in_})), 2);  // (N, L)
  const Var a = mul(z, Var::constant(signs));
  Tensor valid = Tensor::zeros({n, len});
  for (int64_t i = 0; i < valid.numel(); ++i) valid[i] = signs[i] != 0 ? 1 : 0;
  return sum(mul(neg(softplus(neg(a))), Var::constant(valid)), 1);
}

Var HuffmanSoftmax::loss(const Var& h, const Tensor& targets) const {
  return neg(mean(target_log_prob(h, targets)));
}

Var HuffmanSoftmax::log_prob(const Var& h) const {
  if (h.value().rank() != 2)
    throw Error(fmt::format("HuffmanSoftmax.log_prob: h must be (N, {}), got {}", in_,
                            shape_str(h.value().shape())));
  const int64_t n = h.value().shape()[0], v = classes();
  Tensor rows({n * v}), cls({n * v});
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < v; ++c) {
      rows[r * v + c] = static_cast<real>(r);
      cls[r * v + c] = static_cast<real>(c);
    }
  return reshape(target_log_prob(embedding(h, rows), cls), {n, v});
}

}  // namespace attn::nn
