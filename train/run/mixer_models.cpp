// `attnlab train <task> --model mixer --mixer NAME`: nn::MixerModel (embedding + sinusoidal
// positions, pre-norm blocks of the chosen mixer and a GELU feed-forward, a linear read-out) as
// a causal language model, trained like gpt:
//   seq2seq tasks: one sequence BOS x SEP y EOS, scored on y EOS, answers decoded greedily;
//   charlm: every next character.
// The mixer is any causal row of nn::mixer_registry(): the built-ins, attention-zoo's and
// linear-zoo's variants, S6, or a row a --plugin file added (after its gradient check,
// experiments/plugin/).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/tape.h"
#include "data/batch.h"
#include "nn/mixer/mixer_model.h"
#include "nn/mixer/mixer_registry.h"
#include "train/run/task_model.h"

namespace attn::train {

namespace {

class MixerLanguageModel final : public TaskModel {
 public:
  MixerLanguageModel(const TrainConfig& cfg,
                     const data::Task& task,
                     SequenceLimits limits,
                     Generator& gen)
      : cfg_(cfg),
        lm_(task.kind() == data::TaskKind::kLanguageModel),
        row_(*nn::mixer_registry().find(cfg.mixer)),
        model_(options(cfg, task, limits), factory(cfg, limits, task), gen) {}

  nn::Module& module() override { return model_; }
  LossOut loss(const std::vector<data::Example>& batch) override {
    const data::Batch b =
        lm_ ? data::collate_language_model(batch) : data::collate_decoder_only(batch);
    const Var logits = model_.forward_positions(b.tgt_in);  // (B,T,vocab)
    return {cross_entropy(logits, b.tgt_out, data::kIgnoreIndex,
                          static_cast<real>(cfg_.label_smoothing)),
            b.num_target_tokens};
  }
  // Greedy: rows with prompts BOS x SEP of one length grow together, one token per full forward
  // (no cache: the mixer is the student's, with no decoding state to reuse).
  std::vector<std::vector<int64_t>> generate(const std::vector<data::Example>& batch,
                                             int64_t max_new_tokens) override {
    NoGrad off;
    std::map<size_t, std::vector<size_t>> by_length;
    for (size_t i = 0; i < batch.size(); ++i) by_length[batch[i].src.size()].push_back(i);
    std::vector<std::vector<int64_t>> out(batch.size());
    for (const auto& [len, rows] : by_length) {
      std::vector<std::vector<int64_t>> seqs;
      for (size_t r : rows) {
        std::vector<int64_t> s{data::kBos};
        s.insert(s.end(), batch[r].src.begin(), batch[r].src.end());
        s.push_back(data::kSep);
        seqs.push_back(s);
      }
      const auto T0 = static_cast<int64_t>(len) + 2;
      const int64_t steps = std::min(max_new_tokens, model_.options().max_len - T0);
      std::vector<bool> done(rows.size(), false);
      for (int64_t step = 0; step < steps; ++step) {
        const auto T = T0 + step;
        Tensor ids({static_cast<int64_t>(rows.size()), T});
        for (size_t r = 0; r < rows.size(); ++r)
          for (int64_t t = 0; t < T; ++t) ids[static_cast<int64_t>(r) * T + t] = seqs[r][t];
        const Tensor logits = model_.forward_positions(ids).value();  // (R,T,V)
        const int64_t V = logits.size(2);
        bool all_done = true;
        for (size_t r = 0; r < rows.size(); ++r) {
          const real* last = logits.data() + (static_cast<int64_t>(r) * T + T - 1) * V;
          const auto next = static_cast<int64_t>(std::max_element(last, last + V) - last);
          seqs[r].push_back(done[r] ? data::kPad : next);
          done[r] = done[r] || next == data::kEos;
          all_done = all_done && done[r];
        }
        if (all_done) break;
      }
      for (size_t r = 0; r < rows.size(); ++r)
        for (size_t t = static_cast<size_t>(T0); t < seqs[r].size(); ++t) {
          if (seqs[r][t] == data::kEos || seqs[r][t] == data::kPad) break;
          out[rows[r]].push_back(seqs[r][t]);
        }
    }
    return out;
  }
  std::string describe() override {
    return fmt::format(
        "MixerModel({} mixer{}, d_model {}, {} heads, {} layers, ff {}, sinusoidal "
        "positions): {} parameters",
        row_.name, row_.origin.empty() ? "" : " from " + row_.origin, cfg_.d_model, cfg_.nhead,
        cfg_.num_layers, cfg_.dim_ff, parameter_count(model_));
  }

 private:
  static int64_t max_len(SequenceLimits limits, const data::Task& task) {
    return task.kind() == data::TaskKind::kLanguageModel ? limits.src : limits.src + limits.tgt + 3;
  }
  static nn::MixerModelOptions options(const TrainConfig& cfg,
                                       const data::Task& task,
                                       SequenceLimits limits) {
    const int64_t vocab = task.tokenizer().vocab_size();
    // MixerModel's feed-forward width is a multiple of d_model: the nearest to --dim_ff.
    const int64_t ff_mult = std::max<int64_t>(1, (cfg.dim_ff + cfg.d_model / 2) / cfg.d_model);
    return {.vocab = vocab,
            .max_len = max_len(limits, task),
            .d_model = cfg.d_model,
            .layers = cfg.num_layers,
            .classes = vocab,
            .ff_mult = cfg.feedforward ? ff_mult : 0};
  }
  static nn::MixerFactory factory(const TrainConfig& cfg,
                                  SequenceLimits limits,
                                  const data::Task& task) {
    const nn::MixerRow row = *nn::mixer_registry().find(cfg.mixer);
    const nn::MixerShape shape{.d_model = cfg.d_model,
                               .nhead = cfg.nhead,
                               .max_len = max_len(limits, task),
                               .layers = cfg.num_layers};
    return [row, shape](int64_t layer, Generator& g) { return row.make(shape, layer, g); };
  }

  TrainConfig cfg_;
  bool lm_;
  nn::MixerRow row_;
  nn::MixerModel model_;
};

}  // namespace

void validate_mixer_choice(const TrainConfig& c) {
  const nn::MixerRow* row = nn::mixer_registry().find(c.mixer);
  if (!row)
    throw UsageError(
        fmt::format("--mixer: unknown '{}' (choose from {}; a --plugin file adds "
                    "its own)",
                    c.mixer, fmt::join(nn::mixer_registry().names(), " ")));
  if (!row->causal)
    throw UsageError(
        fmt::format("--mixer {}: --model mixer is a causal language model and this "
                    "mixer lets a position read later ones",
                    c.mixer));
}

std::unique_ptr<TaskModel> make_mixer_model(const TrainConfig& cfg,
                                            const data::Task& task,
                                            SequenceLimits limits,
                                            Generator& gen) {
  validate_mixer_choice(cfg);
  return std::make_unique<MixerLanguageModel>(cfg, task, limits, gen);
}

}  // namespace attn::train
