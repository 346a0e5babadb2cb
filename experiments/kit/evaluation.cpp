#include "experiments/kit/evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"
#include "autograd/shape.h"

namespace attn::experiments::kit {

int64_t argmax(const real* row, int64_t n) {
  return std::max_element(row, row + n) - row;
}

void Accuracy::add(const Tensor& logits, const Tensor& labels, int64_t ignore_index) {
  const int64_t c = logits.rank() > 0 ? logits.size(-1) : 0;
  if (c == 0 || logits.numel() != c * labels.numel())
    throw Error(fmt::format("Accuracy: logits {} do not hold one row per label of {}",
                            shape_str(logits.shape()), shape_str(labels.shape())));
  for (int64_t i = 0; i < labels.numel(); ++i) {
    const auto label = static_cast<int64_t>(labels[i]);
    if (label == ignore_index) continue;
    right_ += argmax(logits.data() + i * c, c) == label;
    ++scored_;
  }
}

double Accuracy::value() const {
  if (scored_ == 0) throw Error("Accuracy: nothing was scored");
  return static_cast<double>(right_) / static_cast<double>(scored_);
}

double accuracy(const Tensor& logits, const Tensor& labels, int64_t ignore_index) {
  Accuracy a;
  a.add(logits, labels, ignore_index);
  return a.value();
}

void NextTokenNll::add(const Tensor& logits, const Tensor& targets, int64_t ignore_index) {
  const int64_t v = logits.rank() > 0 ? logits.size(-1) : 0;
  if (v == 0 || logits.numel() != v * targets.numel())
    throw Error(fmt::format("NextTokenNll: logits {} do not hold one row per target of {}",
                            shape_str(logits.shape()), shape_str(targets.shape())));
  for (int64_t i = 0; i < targets.numel(); ++i) {
    const auto target = static_cast<int64_t>(targets[i]);
    if (target == ignore_index) continue;
    const real* row = logits.data() + i * v;
    const int64_t best = argmax(row, v);
    double lse = 0;  // log sum exp(row - max), in double
    for (int64_t k = 0; k < v; ++k) lse += std::exp(static_cast<double>(row[k] - row[best]));
    nll_ += std::log(lse) - static_cast<double>(row[target] - row[best]);
    right_ += best == target;
    ++tokens_;
  }
}

double NextTokenNll::mean() const {
  if (tokens_ == 0) throw Error("NextTokenNll: no token was scored");
  return nll_ / static_cast<double>(tokens_);
}

double NextTokenNll::accuracy() const {
  if (tokens_ == 0) throw Error("NextTokenNll: no token was scored");
  return static_cast<double>(right_) / static_cast<double>(tokens_);
}

double exact_match(const std::vector<std::vector<int64_t>>& answers,
                   const std::vector<std::vector<int64_t>>& expected) {
  if (answers.size() != expected.size() || answers.empty())
    throw Error(fmt::format("exact_match: {} answers for {} expected sequences", answers.size(),
                            expected.size()));
  int64_t right = 0;
  for (size_t i = 0; i < answers.size(); ++i) right += answers[i] == expected[i];
  return static_cast<double>(right) / static_cast<double>(answers.size());
}

void ByLength::add(int64_t length, bool hit) {
  auto& [hits, count] = counts_[length];
  hits += hit;
  ++count;
}

std::map<int64_t, double> ByLength::rates() const {
  std::map<int64_t, double> r;
  for (const auto& [len, hc] : counts_)
    r[len] = static_cast<double>(hc.first) / static_cast<double>(hc.second);
  return r;
}

int64_t count_parameters(const nn::Module& module) {
  int64_t n = 0;
  for (const Var& p : module.parameters()) n += p.numel();
  return n;
}

}  // namespace attn::experiments::kit
