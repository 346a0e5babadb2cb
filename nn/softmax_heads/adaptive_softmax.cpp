#include "nn/softmax_heads/adaptive_softmax.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

AdaptiveTail::AdaptiveTail(int64_t in_features, int64_t hidden, int64_t size, Generator& gen)
    : Module("AdaptiveTail") {
  proj = register_module("0", std::make_shared<Linear>(in_features, hidden, false, gen));
  out = register_module("1", std::make_shared<Linear>(hidden, size, false, gen));
}

Var AdaptiveTail::forward(const Var& x) const {
  return out->forward(proj->forward(x));
}

AdaptiveLogSoftmax::AdaptiveLogSoftmax(int64_t in_features,
                                       int64_t n_classes,
                                       std::vector<int64_t> cutoffs,
                                       Generator& gen,
                                       double div_value,
                                       bool head_bias)
    : Module("AdaptiveLogSoftmaxWithLoss"), in_(in_features), n_classes_(n_classes) {
  bool sorted = !cutoffs.empty();
  for (size_t i = 0; i < cutoffs.size(); ++i)
    sorted = sorted && cutoffs[i] > 0 && cutoffs[i] < n_classes &&
             (i == 0 || cutoffs[i] > cutoffs[i - 1]);
  if (!sorted)
    throw Error(fmt::format(
        "AdaptiveLogSoftmax: cutoffs {} must be increasing whole numbers in [1, {}) (n_classes {})",
        cutoffs, n_classes, n_classes));
  cutoffs_ = std::move(cutoffs);
  cutoffs_.push_back(n_classes);
  const int64_t n_clusters = static_cast<int64_t>(cutoffs_.size()) - 1;
  head = register_module(
      "head", std::make_shared<Linear>(in_features, cutoffs_[0] + n_clusters, head_bias, gen));
  tails_ = register_module("tail", std::make_shared<ModuleList<AdaptiveTail>>());
  for (int64_t i = 0; i < n_clusters; ++i) {
    // PyTorch: int(in_features // div_value ** (i + 1)), a floor.
    const auto hidden = static_cast<int64_t>(
        std::floor(static_cast<double>(in_features) / std::pow(div_value, i + 1)));
    if (hidden < 1)
      throw Error(fmt::format(
          "AdaptiveLogSoftmax: cluster {} gets {} / {}^{} < 1 projection dims (lower div_value "
          "or use fewer cutoffs)",
          i, in_features, div_value, i + 1));
    tails_->append(
        std::make_shared<AdaptiveTail>(in_features, hidden, cutoffs_[i + 1] - cutoffs_[i], gen));
  }
}

Var AdaptiveLogSoftmax::log_prob(const Var& x) const {
  if (x.value().rank() != 2 || x.value().shape()[1] != in_)
    throw Error(fmt::format("AdaptiveLogSoftmax.log_prob: x must be (N, {}), got {}", in_,
                            shape_str(x.value().shape())));
  const int64_t c0 = shortlist();
  const Var head_lp = log_softmax(head->forward(x));  // (N, c0 + clusters)
  std::vector<Var> parts = {slice(head_lp, 1, 0, c0)};
  for (size_t i = 0; i < clusters(); ++i) {
    const auto col = c0 + static_cast<int64_t>(i);
    // log p(t) = log p_head(cluster i) + log p_i(t): (N,1) broadcast over the cluster's columns
    parts.push_back(add(log_softmax((*tails_)[i].forward(x)), slice(head_lp, 1, col, col + 1)));
  }
  return concat(parts, 1);
}

Var AdaptiveLogSoftmax::loss(const Var& x, const Tensor& targets) const {
  const int64_t n = x.value().rank() == 2 ? x.value().shape()[0] : -1;
  if (n < 1 || x.value().shape()[1] != in_ || targets.numel() != n)
    throw Error(
        fmt::format("AdaptiveLogSoftmax.loss: x must be (N, {}) and targets (N), got {} "
                    "and {}",
                    in_, shape_str(x.value().shape()), shape_str(targets.shape())));
  // -log p(t) = -log p_head(h(t)) - [t in cluster i] log p_i(t - c_i), where h(t) is t in the
  // shortlist and c0 + i in cluster i. Each cluster's softmax runs on its own rows only.
  const int64_t c0 = shortlist();
  Tensor head_targets({n});
  std::vector<std::vector<int64_t>> rows(clusters());
  for (int64_t r = 0; r < n; ++r) {
    const auto t = static_cast<int64_t>(targets[r]);
    if (t < 0 || t >= n_classes_ || static_cast<real>(t) != targets[r])
      throw Error(
          fmt::format("AdaptiveLogSoftmax.loss: target {} of row {} is not a class id in "
                      "[0, {})",
                      targets[r], r, n_classes_));
    size_t c = 0;
    while (c < clusters() && t >= cutoffs_[c + 1]) ++c;
    const bool in_head = t < c0;
    if (!in_head) rows[c].push_back(r);
    head_targets[r] = static_cast<real>(in_head ? t : c0 + static_cast<int64_t>(c));
  }
  Var total = cross_entropy(head->forward(x), head_targets);  // mean over the N rows
  for (size_t i = 0; i < clusters(); ++i) {
    const auto m = static_cast<int64_t>(rows[i].size());
    if (m == 0) continue;
    Tensor index({m}), local({m});
    for (int64_t k = 0; k < m; ++k) {
      index[k] = static_cast<real>(rows[i][k]);
      local[k] = targets[rows[i][k]] - static_cast<real>(cutoffs_[i]);
    }
    const Var xi = embedding(x, index);  // the cluster's rows of x, (m, in); backward scatters
    const Var ce = cross_entropy((*tails_)[i].forward(xi), local);  // mean over the m rows
    total = add(total, mul_scalar(ce, static_cast<real>(m) / static_cast<real>(n)));
  }
  return total;
}

}  // namespace attn::nn
