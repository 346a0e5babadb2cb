// AdaptiveLogSoftmax: PyTorch's nn.AdaptiveLogSoftmaxWithLoss (Grave et al. 2017, "Efficient
// softmax approximation for GPUs"), same parameter names, layout and initialisation.
//
//   attn::Generator gen(0);
//   // 1000 classes: a shortlist of the 50 most frequent, then clusters [50,250) and [250,1000)
//   attn::nn::AdaptiveLogSoftmax head(/*in_features=*/64, /*n_classes=*/1000, {50, 250}, gen);
//   attn::Var logp = head.log_prob(h);          // h (N,64) -> (N,1000), every class
//   attn::Var loss = head.loss(h, targets);      // mean -log p(target): only the clusters needed
//   head.named_parameters();   // head.weight (52,64), tail.0.0.weight (16,64),
//                              // tail.0.1.weight (200,16), tail.1.0.weight (4,64), ...
//
// Classes are sorted by frequency (id 0 the most frequent). The head is a softmax over the
// shortlist [0, c_0) plus one entry per cluster; cluster i covers [c_i, c_(i+1)) and has its own
// softmax, reached through a projection to in_features / div_value^(i+1) dims (rarer words get
// smaller vectors). log p(t) = log p_head(t) for t in the shortlist, and
// log p_head(cluster i) + log p_i(t) for t in cluster i. A frequent token costs one head softmax
// (c_0 + clusters wide) instead of a softmax over all n_classes.
//
// Built from existing ops (linear, log_softmax, concat, embedding as a row gather, cross_entropy),
// so its backward is the tape's.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/module_list.h"

namespace attn::nn {

// One tail cluster: PyTorch's nn.Sequential(Linear(in, hidden, bias=False),
// Linear(hidden, size, bias=False)), parameters "0.weight" and "1.weight".
class AdaptiveTail : public Module {
 public:
  AdaptiveTail(int64_t in_features, int64_t hidden, int64_t size, Generator& gen);
  Var forward(const Var& x) const;  // x (N,in) -> (N,size) logits
  std::shared_ptr<Linear> proj, out;
};

class AdaptiveLogSoftmax : public Module {
 public:
  // cutoffs: increasing, each in (0, n_classes); n_classes is appended as the last boundary.
  AdaptiveLogSoftmax(int64_t in_features,
                     int64_t n_classes,
                     std::vector<int64_t> cutoffs,
                     Generator& gen,
                     double div_value = 4.0,
                     bool head_bias = false);

  // x (N,in) -> (N,n_classes): log-probabilities of every class.
  Var log_prob(const Var& x) const;
  // x (N,in), targets (N) class ids -> (N): log p(target) per row, each cluster's softmax run
  // only on the rows whose target lies in it (PyTorch's forward(...).output).
  Var target_log_prob(const Var& x, const Tensor& targets) const;
  // Mean negative log-likelihood, -mean(target_log_prob) (PyTorch's forward(...).loss).
  Var loss(const Var& x, const Tensor& targets) const;

  int64_t n_classes() const { return n_classes_; }
  int64_t shortlist() const { return cutoffs_.front(); }
  size_t clusters() const { return tails_->size(); }
  int64_t cluster_start(size_t i) const { return cutoffs_[i]; }
  int64_t cluster_end(size_t i) const { return cutoffs_[i + 1]; }
  const AdaptiveTail& tail(size_t i) const { return (*tails_)[i]; }

  std::shared_ptr<Linear> head;

 private:
  int64_t in_, n_classes_;
  std::vector<int64_t> cutoffs_;  // the given cutoffs followed by n_classes
  std::shared_ptr<ModuleList<AdaptiveTail>> tails_;
};

}  // namespace attn::nn
