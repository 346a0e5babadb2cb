#include "experiments/scaling/emergence_task.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/mode.h"
#include "data/tokenizer.h"
#include "experiments/kit/evaluation.h"

namespace attn::experiments {

AdditionTask::AdditionTask(int64_t digits) : digits_(digits), limit_(1) {
  if (digits < 1 || digits > 9)
    throw UsageError(fmt::format("emergence: --digits {} is outside [1, 9]", digits));
  for (int64_t i = 0; i < digits; ++i) limit_ *= 10;
}

namespace {

// The digits of v, least significant first, `count` of them (zero-padded).
std::vector<int64_t> reversed_digits(int64_t v, int64_t count) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < count; ++i, v /= 10) out.push_back(v % 10);
  return out;
}

}  // namespace

AdditionSet AdditionTask::draw(int64_t n, Generator& gen) const {
  const int64_t t = input_length();
  AdditionSet s{Tensor({n, t}), Tensor({n, t}), {}};
  for (int64_t r = 0; r < n; ++r) {
    int64_t a = 0, b = 0;
    do {
      a = gen.randint(limit_);
      b = gen.randint(limit_);
    } while (held_.count({a, b}) > 0);
    s.operands.emplace_back(a, b);
    // The full sequence: triplets a_i b_i s_i for i = 0 .. d (a_d = b_d = 0, s_d the last carry).
    const std::vector<int64_t> da = reversed_digits(a, digits_ + 1),
                               db = reversed_digits(b, digits_ + 1),
                               ds = reversed_digits(a + b, digits_ + 1);
    std::vector<int64_t> seq;
    for (int64_t i = 0; i <= digits_; ++i) seq.insert(seq.end(), {da[i], db[i], ds[i]});
    // ids = seq[0 .. t), targets = seq[1 .. t] where the next token is a sum digit (after b_i).
    for (int64_t i = 0; i < t; ++i) {
      s.ids[r * t + i] = static_cast<real>(seq[i]);
      s.targets[r * t + i] = static_cast<real>(i % 3 == 1 ? seq[i + 1] : data::kIgnoreIndex);
    }
  }
  return s;
}

void AdditionTask::hold_out(const AdditionSet& s) {
  for (const auto& [a, b] : s.operands) {
    held_.insert({a, b});
    held_.insert({b, a});
  }
}

AdditionScore score_additions(nn::DecoderOnlyTransformer& model, const AdditionSet& s) {
  NoGrad off;
  const bool was_training = model.is_training();
  model.eval();
  const Tensor logits = model.forward(s.ids).value();  // (n, t, V)
  if (was_training) model.train();
  const int64_t n = s.ids.size(0), t = s.ids.size(1), v = logits.size(-1);
  kit::NextTokenNll per_token;
  per_token.add(logits, s.targets, data::kIgnoreIndex);
  // The greedy answers: the argmax at every answer position (teacher-forced, see the header).
  std::vector<std::vector<int64_t>> answers(n), expected(n);
  std::vector<double> right_at;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0, k = 0; i < t; ++i) {
      const auto target = static_cast<int64_t>(s.targets[r * t + i]);
      if (target == data::kIgnoreIndex) continue;
      const int64_t guess = kit::argmax(logits.data() + (r * t + i) * v, v);
      answers[r].push_back(guess);
      expected[r].push_back(target);
      if (static_cast<size_t>(k) == right_at.size()) right_at.push_back(0);
      right_at[k++] += guess == target ? 1.0 : 0.0;
    }
  for (double& x : right_at) x /= static_cast<double>(n);
  return {kit::exact_match(answers, expected), per_token.accuracy(), per_token.mean(), right_at};
}

}  // namespace attn::experiments
