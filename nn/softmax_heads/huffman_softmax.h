// HuffmanSoftmax: hierarchical softmax over a Huffman tree (word2vec's output layer; Morin and
// Bengio 2005, Mikolov et al. 2013). No PyTorch twin: gradcheck only.
//
//   attn::Generator gen(0);
//   std::vector<double> counts = {50, 20, 20, 5, 5};        // class frequencies
//   attn::nn::HuffmanSoftmax hs(/*in_features=*/16, counts, gen);
//   attn::Var loss = hs.loss(h, targets);   // h (N,16), targets (N) -> mean -log p(target)
//   attn::Var logp = hs.log_prob(h);        // (N,5): every class (costs V - 1 decisions a row)
//   hs.depth(3);                            // the number of binary decisions for class 3
//
// The V classes are the leaves of a binary tree built by Huffman's algorithm on the counts, so a
// frequent class sits near the root. Each of the V - 1 inner nodes n has a vector w_n (a row of
// `weight`, (V-1, in)). Going from the root to leaf t, each step is a logistic decision: at node
// n the path turns with sign s = +1 (one child) or -1 (the other), taken with probability
// sigma(s h.w_n). So log p(t | h) = sum over the path of log sigma(s_k h.w_(n_k)): the leaves'
// probabilities sum to 1 by construction, and a token costs depth(t) dot products instead of V.
// The average depth sum_t f_t depth(t) of a Huffman tree lies within [H, H + 1) bits of the
// frequencies' entropy H, the shortest of any binary tree.
//
// Built from existing ops (embedding as a row gather, mul, sum, softplus), so its backward is
// the tape's.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "nn/module.h"

namespace attn::nn {

class HuffmanSoftmax : public Module {
 public:
  // counts (V) > 0: the class frequencies the tree is built from; weight ~ U(-1/sqrt(in), ...).
  HuffmanSoftmax(int64_t in_features, const std::vector<double>& counts, Generator& gen);

  // h (N,in), targets (N) class ids -> (N): log p(target | h) per row.
  Var target_log_prob(const Var& h, const Tensor& targets) const;
  Var loss(const Var& h, const Tensor& targets) const;  // -mean(target_log_prob)
  Var log_prob(const Var& h) const;                     // (N,V): every class

  int64_t classes() const { return static_cast<int64_t>(paths_.size()); }
  int64_t depth(int64_t cls) const { return static_cast<int64_t>(paths_.at(cls).size()); }
  int64_t max_depth() const { return max_depth_; }

  Var weight;  // (V-1, in): one vector per inner node

 private:
  struct Step {
    int64_t node;  // inner node index, a row of weight
    real sign;     // +1 or -1: which child the path takes
  };
  std::vector<std::vector<Step>> paths_;  // per class, root first
  int64_t in_, max_depth_ = 0;
};

}  // namespace attn::nn
