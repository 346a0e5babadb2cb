#include "train/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"
#include "data/tokenizer.h"

namespace attn::train {

Tensor argmax_last(const Tensor& logits) {
  if (logits.rank() < 1) throw Error("argmax_last: logits must have at least one axis");
  const int64_t V = logits.size(-1);
  Shape out_shape(logits.shape().begin(), logits.shape().end() - 1);
  Tensor out(out_shape);
  const int64_t rows = logits.numel() / std::max<int64_t>(V, 1);
  for (int64_t r = 0; r < rows; ++r) {
    const real* x = logits.data() + r * V;
    out[r] = static_cast<real>(std::max_element(x, x + V) - x);
  }
  return out;
}

void SeqMetrics::add(const Tensor& pred, const Tensor& target) {
  if (pred.shape() != target.shape())
    throw Error(fmt::format("SeqMetrics::add: predictions {} and targets {} differ in shape",
                            shape_str(pred.shape()), shape_str(target.shape())));
  const int64_t B = target.rank() == 0 ? 1 : target.size(0);
  const int64_t T = B == 0 ? 0 : target.numel() / B;
  for (int64_t b = 0; b < B; ++b) {
    bool all = true;
    for (int64_t t = 0; t < T; ++t) {
      const real y = target[b * T + t];
      if (y == data::kIgnoreIndex) continue;
      const bool ok = pred[b * T + t] == y;
      ++tokens_;
      correct_tokens_ += ok;
      all = all && ok;
    }
    ++sequences_;
    exact_ += all;
  }
}

void SeqMetrics::add_sequences(const std::vector<std::vector<int64_t>>& predicted,
                               const std::vector<std::vector<int64_t>>& expected) {
  if (predicted.size() != expected.size())
    throw Error(fmt::format("SeqMetrics::add_sequences: {} predictions for {} expected sequences",
                            predicted.size(), expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& p = predicted[i];
    const auto& e = expected[i];
    for (size_t t = 0; t < e.size(); ++t) correct_tokens_ += t < p.size() && p[t] == e[t];
    tokens_ += static_cast<int64_t>(e.size());
    ++sequences_;
    exact_ += p == e;
  }
}

void SeqMetrics::add_nll(double sum_nll, int64_t tokens) {
  nll_ += sum_nll;
  nll_tokens_ += tokens;
}

std::vector<double> SeqMetrics::counts() const {
  // Counts below 2^53 are exact in a double.
  return {static_cast<double>(tokens_),     static_cast<double>(correct_tokens_),
          static_cast<double>(sequences_),  static_cast<double>(exact_),
          static_cast<double>(nll_tokens_), nll_};
}

void SeqMetrics::add_counts(const std::vector<double>& c) {
  if (c.size() != 6)
    throw Error(fmt::format("SeqMetrics::add_counts: expected 6 counts, got {}", c.size()));
  tokens_ += static_cast<int64_t>(c[0]);
  correct_tokens_ += static_cast<int64_t>(c[1]);
  sequences_ += static_cast<int64_t>(c[2]);
  exact_ += static_cast<int64_t>(c[3]);
  nll_tokens_ += static_cast<int64_t>(c[4]);
  nll_ += c[5];
}

double SeqMetrics::token_accuracy() const {
  return tokens_ ? static_cast<double>(correct_tokens_) / static_cast<double>(tokens_) : 0.0;
}

double SeqMetrics::exact_match() const {
  return sequences_ ? static_cast<double>(exact_) / static_cast<double>(sequences_) : 0.0;
}

double SeqMetrics::mean_nll() const {
  if (nll_tokens_ == 0) throw Error("SeqMetrics: no loss was added (add_nll)");
  return nll_ / static_cast<double>(nll_tokens_);
}

double SeqMetrics::perplexity() const {
  return std::exp(mean_nll());
}

Metrics SeqMetrics::summary() const {
  Metrics m{{"token_accuracy", token_accuracy()}, {"exact_match", exact_match()}};
  if (nll_tokens_ > 0) {
    m["loss"] = mean_nll();
    m["perplexity"] = perplexity();
  }
  return m;
}

}  // namespace attn::train
