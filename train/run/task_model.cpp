#include "train/run/task_model.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "data/tokenizer.h"
#include "train/metrics.h"

namespace attn::train {

std::vector<std::vector<int64_t>> TaskModel::generate(const std::vector<data::Example>&, int64_t) {
  throw Error("this model cannot generate sequences");
}

std::vector<int64_t> TaskModel::classify(const std::vector<data::Example>&) {
  throw Error("this model has no classifier");
}

std::unique_ptr<TaskModel> make_task_model(const TrainConfig& cfg,
                                           const data::Task& task,
                                           SequenceLimits limits,
                                           Generator& gen) {
  if (cfg.model == "lstm" || cfg.model == "gru" || cfg.model == "rnn")
    return make_recurrent_model(cfg, task, gen);
  if (cfg.model == "mixer") return make_mixer_model(cfg, task, limits, gen);
  return make_transformer_model(cfg, task, limits, gen);
}

std::vector<std::vector<int64_t>> rows_until_eos(const Tensor& ids) {
  const int64_t B = ids.size(0), T = ids.size(1);
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      const auto id = static_cast<int64_t>(ids[b * T + t]);
      if (id == data::kEos) break;
      out[static_cast<size_t>(b)].push_back(id);
    }
  return out;
}

std::vector<int64_t> predicted_labels(const Tensor& logits) {
  const Tensor pred = argmax_last(logits);
  std::vector<int64_t> out;
  for (int64_t i = 0; i < pred.numel(); ++i) out.push_back(static_cast<int64_t>(pred[i]));
  return out;
}

std::string parameter_count(const nn::Module& m) {
  const auto n = static_cast<double>(m.num_parameters());
  return n >= 1e6 ? fmt::format("{:.2f}M", n / 1e6) : fmt::format("{:.1f}k", n / 1e3);
}

}  // namespace attn::train
