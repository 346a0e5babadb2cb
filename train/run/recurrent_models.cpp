// The recurrent adapters of the train command: lstm / gru / rnn for seq2seq tasks (the
// encoder-decoder of nn/rnn/seq2seq.h, with the chosen attention), for classification (an
// encoder whose final state feeds a linear classifier) and for character language modelling.
#include <fmt/format.h>

#include "autograd/functional.h"
#include "data/batch.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/rnn/recurrent.h"
#include "nn/rnn/seq2seq.h"
#include "train/run/task_model.h"

namespace attn::train {

namespace {

nn::RecurrentMode mode_of(const std::string& model) {
  if (model == "gru") return nn::RecurrentMode::kGru;
  if (model == "rnn") return nn::RecurrentMode::kRnnTanh;
  return nn::RecurrentMode::kLstm;
}

class RecurrentSeq2Seq final : public TaskModel {
 public:
  RecurrentSeq2Seq(const TrainConfig& cfg, const data::Task& task, Generator& gen)
      : cfg_(cfg),
        model_({.cell = mode_of(cfg.model),
                .attention = nn::seq2seq_attention_from_name(cfg.attention),
                .src_vocab = task.tokenizer().vocab_size(),
                .tgt_vocab = task.tokenizer().vocab_size(),
                .embed_dim = cfg.hidden,
                .hidden_size = cfg.hidden,
                .num_layers = cfg.num_layers,
                .dropout = cfg.dropout,
                .pad_id = data::kPad,
                .bos_id = data::kBos,
                .eos_id = data::kEos},
               gen) {}

  nn::Module& module() override { return model_; }
  LossOut loss(const std::vector<data::Example>& batch) override {
    const data::Batch b = data::collate_seq2seq(batch, 0, cfg_.src_eos);
    const Var logits = model_.forward(b.src, b.tgt_in).logits;
    return {cross_entropy(logits, b.tgt_out, data::kIgnoreIndex,
                          static_cast<real>(cfg_.label_smoothing)),
            b.num_target_tokens};
  }
  std::vector<std::vector<int64_t>> generate(const std::vector<data::Example>& batch,
                                             int64_t max_new_tokens) override {
    const data::Batch b = data::collate_seq2seq(batch, 0, cfg_.src_eos);
    return rows_until_eos(model_.greedy_decode(b.src, max_new_tokens).tokens);
  }
  std::string describe() override {
    return fmt::format("RnnSeq2Seq({}, attention {}, hidden {}, layers {}): {} parameters",
                       cfg_.model, cfg_.attention, cfg_.hidden, cfg_.num_layers,
                       parameter_count(model_));
  }

 private:
  TrainConfig cfg_;
  nn::RnnSeq2Seq model_;
};

// Embedding -> recurrent stack -> linear. For classification the head reads the final hidden
// state of the top layer; for language modelling it reads every position.
class RecurrentTagger final : public nn::Module {
 public:
  RecurrentTagger(const TrainConfig& cfg, int64_t vocab, int64_t outputs, Generator& gen)
      : Module("RecurrentTagger") {
    embedding =
        register_module("embedding", std::make_shared<nn::Embedding>(vocab, cfg.hidden, gen));
    rnn = register_module(
        "rnn", std::make_shared<nn::Recurrent>(mode_of(cfg.model),
                                               nn::RecurrentOptions{.input_size = cfg.hidden,
                                                                    .hidden_size = cfg.hidden,
                                                                    .num_layers = cfg.num_layers,
                                                                    .batch_first = true,
                                                                    .dropout = cfg.dropout},
                                               gen));
    head = register_module("head", std::make_shared<nn::Linear>(cfg.hidden, outputs, true, gen));
  }
  // ids (B,T) -> per-position outputs (B,T,outputs)
  Var every_position(const Tensor& ids) {
    return head->forward(rnn->forward(embedding->forward(ids)).y);
  }
  // ids (B,T) with per-row lengths -> (B,outputs) from the final state of the top layer
  Var final_state(const Tensor& ids, const std::vector<int64_t>& lengths) {
    const Var h = rnn->forward(embedding->forward(ids), std::nullopt, lengths).state.h;  // (L,B,H)
    const int64_t L = h.size(0);
    return head->forward(reshape(slice(h, 0, L - 1, L), {h.size(1), h.size(2)}));
  }
  std::shared_ptr<nn::Embedding> embedding;
  std::shared_ptr<nn::Recurrent> rnn;
  std::shared_ptr<nn::Linear> head;
};

class RecurrentClassifier final : public TaskModel {
 public:
  RecurrentClassifier(const TrainConfig& cfg, const data::Task& task, Generator& gen)
      : cfg_(cfg), model_(cfg, task.tokenizer().vocab_size(), task.num_classes(), gen) {}
  nn::Module& module() override { return model_; }
  LossOut loss(const std::vector<data::Example>& batch) override {
    const data::Batch b = data::collate_classification(batch, false);
    return {cross_entropy(model_.final_state(b.src, b.src_lengths), b.labels, data::kIgnoreIndex,
                          static_cast<real>(cfg_.label_smoothing)),
            b.num_target_tokens};
  }
  std::vector<int64_t> classify(const std::vector<data::Example>& batch) override {
    NoGrad off;
    const data::Batch b = data::collate_classification(batch, false);
    return predicted_labels(model_.final_state(b.src, b.src_lengths).value());
  }
  std::string describe() override {
    return fmt::format("{} classifier (hidden {}, layers {}): {} parameters", cfg_.model,
                       cfg_.hidden, cfg_.num_layers, parameter_count(model_));
  }

 private:
  TrainConfig cfg_;
  RecurrentTagger model_;
};

class RecurrentLanguageModel final : public TaskModel {
 public:
  RecurrentLanguageModel(const TrainConfig& cfg, const data::Task& task, Generator& gen)
      : cfg_(cfg), model_(cfg, task.tokenizer().vocab_size(), task.tokenizer().vocab_size(), gen) {}
  nn::Module& module() override { return model_; }
  LossOut loss(const std::vector<data::Example>& batch) override {
    const data::Batch b = data::collate_language_model(batch);
    return {cross_entropy(model_.every_position(b.tgt_in), b.tgt_out, data::kIgnoreIndex,
                          static_cast<real>(cfg_.label_smoothing)),
            b.num_target_tokens};
  }
  std::string describe() override {
    return fmt::format("{} language model (hidden {}, layers {}): {} parameters", cfg_.model,
                       cfg_.hidden, cfg_.num_layers, parameter_count(model_));
  }

 private:
  TrainConfig cfg_;
  RecurrentTagger model_;
};

}  // namespace

std::unique_ptr<TaskModel> make_recurrent_model(const TrainConfig& cfg,
                                                const data::Task& task,
                                                Generator& gen) {
  switch (task.kind()) {
    case data::TaskKind::kSeq2Seq:
      return std::make_unique<RecurrentSeq2Seq>(cfg, task, gen);
    case data::TaskKind::kClassification:
      return std::make_unique<RecurrentClassifier>(cfg, task, gen);
    case data::TaskKind::kLanguageModel:
      return std::make_unique<RecurrentLanguageModel>(cfg, task, gen);
  }
  return nullptr;
}

}  // namespace attn::train
