#include "experiments/common/answer_training.h"

#include <tuple>

#include "experiments/kit/kit.h"

namespace attn::experiments {

AnswerBatch answer_batch(const data::Task& task, int64_t b, Generator& gen) {
  std::vector<data::Example> exs;
  for (int64_t i = 0; i < b; ++i) exs.push_back(task.sample(gen));
  const auto t = static_cast<int64_t>(exs.front().src.size());
  const auto k = static_cast<int64_t>(exs.front().tgt.size());
  AnswerBatch out{Tensor({b, t}), Tensor({b, std::max<int64_t>(k, 1)})};
  for (int64_t i = 0; i < b; ++i) {
    const data::Example& ex = exs[static_cast<size_t>(i)];
    if (static_cast<int64_t>(ex.src.size()) != t || static_cast<int64_t>(ex.tgt.size()) != k ||
        k < 1)
      throw Error(
          fmt::format("answer_batch: {} examples must share one source length and have a "
                      "non-empty answer of one length",
                      task.name()));
    for (int64_t j = 0; j < t; ++j)
      out.ids[i * t + j] = static_cast<real>(ex.src[static_cast<size_t>(j)]);
    for (int64_t j = 0; j < k; ++j)
      out.answers[i * k + j] = static_cast<real>(ex.tgt[static_cast<size_t>(j)]);
  }
  return out;
}

Var answer_logits(const MixerModel& m, const Tensor& ids, int64_t k) {
  const int64_t b = ids.size(0), t = ids.size(1), c = m.options().classes;
  if (k == 1) return reshape(m.forward(ids), {b, 1, c});
  return slice(m.forward_positions(ids), 1, t - k, t);
}

std::pair<double, double> answer_accuracy(const MixerModel& m,
                                          const std::vector<AnswerBatch>& set) {
  NoGrad off;
  int64_t tokens_right = 0, tokens = 0, answers_right = 0, answers = 0;
  const int64_t c = m.options().classes;
  for (const AnswerBatch& b : set) {
    const int64_t n = b.answers.size(0), k = b.answers.size(1);
    const Tensor logits = answer_logits(m, b.ids, k).value();  // (n,k,c)
    for (int64_t i = 0; i < n; ++i) {
      bool all = true;
      for (int64_t j = 0; j < k; ++j) {
        const real* row = logits.data() + (i * k + j) * c;
        const bool right =
            std::max_element(row, row + c) - row == static_cast<int64_t>(b.answers[i * k + j]);
        tokens_right += right;
        all = all && right;
        ++tokens;
      }
      answers_right += all;
      ++answers;
    }
  }
  return {static_cast<double>(tokens_right) / static_cast<double>(tokens),
          static_cast<double>(answers_right) / static_cast<double>(answers)};
}

AnswerRun train_on_answers(MixerModel& m,
                           const data::Task& task,
                           const AnswerTrainingOptions& o,
                           uint64_t seed) {
  Generator data_gen(seed + 1), eval_gen(seed + 2);
  train::FitSettings s;
  s.name = task.name();
  s.steps = o.steps;
  s.batch_size = o.batch;
  s.optimizer = {.lr = o.lr, .clip = o.clip};  // Adam, constant rate
  AnswerRun run;
  m.train();
  const train::TrainResult r = train::fit(m, s, [&](const train::BatchPart& part) {
    const AnswerBatch b = answer_batch(task, o.batch, data_gen);
    const Tensor answers = part.rows(b.answers);
    return train::StepLoss{
        cross_entropy(answer_logits(m, part.rows(b.ids), answers.size(1)), answers),
        answers.numel()};
  });
  run.seconds = r.wall_seconds;
  // The curve: the mean loss of each block of log_every steps (the last block may be shorter).
  double block = 0;
  int64_t in_block = 0;
  for (size_t i = 0; i < r.losses.size(); ++i) {
    block += r.losses[i];
    if (++in_block == o.log_every || i + 1 == r.losses.size()) {
      run.curve_steps.push_back(static_cast<double>(i + 1));
      run.curve_loss.push_back(block / static_cast<double>(in_block));
      block = 0;
      in_block = 0;
    }
  }
  m.eval();
  std::vector<AnswerBatch> held_out;
  for (int64_t left = o.eval_size; left > 0; left -= 250)
    held_out.push_back(answer_batch(task, std::min<int64_t>(250, left), eval_gen));
  std::tie(run.token_accuracy, run.answer_accuracy) = answer_accuracy(m, held_out);
  return run;
}

}  // namespace attn::experiments
