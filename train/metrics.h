// Evaluation metrics: token accuracy, exact match (whole sequence), perplexity.
//
//   attn::train::SeqMetrics m;
//   m.add(attn::train::argmax_last(logits.value()), batch.tgt_out);  // teacher-forced predictions
//   m.add_nll(loss.item() * batch.num_target_tokens, batch.num_target_tokens);
//   m.token_accuracy(); m.exact_match(); m.perplexity();
//
// Targets equal to kIgnoreIndex (padding, prompts) are not counted. A sequence is an exact match
// when every counted position is right. Perplexity = exp(mean negative log-likelihood per token).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace attn::train {

using Metrics = std::map<std::string, double>;

// logits (..., V) -> (...) index of the largest value (the first on ties).
Tensor argmax_last(const Tensor& logits);

class SeqMetrics {
 public:
  // pred and target (B,T) ids (or (B) for one token per row).
  void add(const Tensor& pred, const Tensor& target);
  // Whole generated sequences against expected ones (no ignore positions): token accuracy over
  // the expected length (missing or extra tokens count as wrong), exact match when identical.
  void add_sequences(const std::vector<std::vector<int64_t>>& predicted,
                     const std::vector<std::vector<int64_t>>& expected);
  void add_nll(double sum_nll, int64_t tokens);

  double token_accuracy() const;
  double exact_match() const;
  double perplexity() const;  // needs add_nll
  double mean_nll() const;
  // {"token_accuracy", "exact_match"} and, when add_nll was used, {"loss", "perplexity"}.
  Metrics summary() const;

  int64_t tokens() const { return tokens_; }
  int64_t sequences() const { return sequences_; }

  // Every counter as one vector (token, right-token, sequence, exact, nll-token counts and the
  // nll sum), so metrics counted on separate ranks can be summed and read as one: after
  // `a.add_counts(b.counts())`, a reports what one SeqMetrics fed both inputs would.
  std::vector<double> counts() const;
  void add_counts(const std::vector<double>& counts);

 private:
  int64_t tokens_ = 0, correct_tokens_ = 0, sequences_ = 0, exact_ = 0;
  double nll_ = 0;
  int64_t nll_tokens_ = 0;
};

}  // namespace attn::train
