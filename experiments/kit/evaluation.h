// Evaluation helpers every experiment shares: argmax accuracy over batches, next-token NLL,
// exact match of generated answers, rates by length, parameter counts.
//
//   attn::experiments::kit::Accuracy acc;
//   for (const Batch& b : heldout) acc.add(model.forward(b.ids).value(), b.labels);  // (N,C), (N)
//   double a = acc.value();                          // right / scored
//   NextTokenNll lm;  lm.add(logits, b.tgt_out);     // (B,T,V), (B,T); kIgnoreIndex skipped
//   lm.mean();  lm.accuracy();
//   ByLength by;  by.add(src.size(), answer == expected);  by.rates();   // length -> rate
//   int64_t n = count_parameters(model);
//
// A prediction is the first index of the largest logit (std::max_element), the convention of
// every experiment: ties go to the lower class.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "autograd/tensor.h"
#include "nn/module.h"

namespace attn::experiments::kit {

// The first index of the largest of row[0..n).
int64_t argmax(const real* row, int64_t n);

// Argmax predictions against labels, counted over any number of batches.
class Accuracy {
 public:
  // logits (..., C) whose leading axes flatten to the labels' count; labels hold class ids.
  // A label equal to ignore_index is not scored (kScoreAll: every label is).
  void add(const Tensor& logits, const Tensor& labels, int64_t ignore_index = kScoreAll);
  int64_t right() const { return right_; }
  int64_t scored() const { return scored_; }
  // right / scored; throws attn::Error when nothing was scored.
  double value() const;
  static constexpr int64_t kScoreAll = std::numeric_limits<int64_t>::min();

 private:
  int64_t right_ = 0, scored_ = 0;
};

// The accuracy of one batch: Accuracy{}.add(logits, labels).value().
double accuracy(const Tensor& logits,
                const Tensor& labels,
                int64_t ignore_index = Accuracy::kScoreAll);

// Mean next-token negative log-likelihood (nats, log-sum-exp in double) and argmax accuracy,
// over every scored position of any number of batches.
class NextTokenNll {
 public:
  // logits (..., V), targets of the leading shape; positions holding ignore_index are skipped.
  void add(const Tensor& logits, const Tensor& targets, int64_t ignore_index);
  double mean() const;      // nll summed / tokens
  double accuracy() const;  // argmax right / tokens
  int64_t tokens() const { return tokens_; }

 private:
  double nll_ = 0;
  int64_t right_ = 0, tokens_ = 0;
};

// The fraction of answers equal to their expected sequence (sizes must match).
double exact_match(const std::vector<std::vector<int64_t>>& answers,
                   const std::vector<std::vector<int64_t>>& expected);

// Hits counted per length (e.g. exact match by source length), in length order.
class ByLength {
 public:
  void add(int64_t length, bool hit);
  std::map<int64_t, double> rates() const;  // length -> hits / count
  const std::map<int64_t, std::pair<int64_t, int64_t>>& counts() const { return counts_; }

 private:
  std::map<int64_t, std::pair<int64_t, int64_t>> counts_;  // length -> (hits, count)
};

// The number of trainable values of a module (every parameter's element count).
int64_t count_parameters(const nn::Module& module);

}  // namespace attn::experiments::kit
