// The transformer adapters of the train command:
//   transformer  seq2seq tasks: the 2017 encoder-decoder (nn/transformer/seq2seq.h);
//                classification: an encoder with a classifier on the BOS slot
//   gpt          seq2seq tasks: one causal sequence BOS x SEP y EOS, scored on y EOS;
//                charlm: next-character prediction (nn/transformer/decoder_only.h)
//   bert         classification: encoder + classifier on the BOS ([CLS]) slot;
//                charlm: masked-language-model training (nn/transformer/encoder_only.h)
#include <fmt/format.h>

#include <map>

#include "autograd/functional.h"
#include "data/batch.h"
#include "data/mlm.h"
#include "nn/linear.h"
#include "nn/positional/score_bias_registry.h"
#include "nn/transformer/decoder_only.h"
#include "nn/transformer/encoder_only.h"
#include "nn/transformer/seq2seq.h"
#include "train/run/task_model.h"

namespace attn::train {

namespace {

real smoothing(const TrainConfig& cfg) {
  return static_cast<real>(cfg.label_smoothing);
}

std::string size_text(const TrainConfig& cfg) {
  const bool grouped = cfg.n_kv_heads > 0 && cfg.n_kv_heads != cfg.nhead;
  return fmt::format("d_model {}, {} heads{}, {} layers, ff {}, {} positions{}", cfg.d_model,
                     cfg.nhead, grouped ? fmt::format(" ({} key/value)", cfg.n_kv_heads) : "",
                     cfg.num_layers, cfg.dim_ff, resolved_positional(cfg),
                     cfg.score == "additive" ? ", additive scores" : "");
}

// A plugin's score bias (nn::score_bias_registry(), --model gpt only, checked by
// validate_train_config) is the model's only positional information, as in length-extrapolation.
bool is_score_bias(const TrainConfig& cfg) {
  return nn::score_bias_registry().find(resolved_positional(cfg)) != nullptr;
}

nn::PositionKind positions(const TrainConfig& cfg) {
  if (is_score_bias(cfg)) return nn::PositionKind::kNone;
  return nn::position_kind_from_name(resolved_positional(cfg), "--positional");
}

nn::AttentionScore score(const TrainConfig& cfg) {
  return nn::attention_score_from_name(cfg.score, "--score");
}

// The block ablation switches (all on by default) and the key/value head count of cfg into a
// model's layer options.
void set_block_parts(const TrainConfig& cfg, nn::TransformerLayerOptions& o) {
  o.n_kv_heads = cfg.n_kv_heads;
  o.layer_norm = cfg.layer_norm;
  o.residual = cfg.residual;
  o.feedforward = cfg.feedforward;
}

// "pre-norm", "post-norm", plus the parts an ablation removed: "post-norm, no residual".
std::string block_text(const TrainConfig& cfg) {
  std::string s = cfg.norm_first ? "pre-norm" : "post-norm";
  if (!cfg.layer_norm) s += ", no layer norm";
  if (!cfg.residual) s += ", no residual";
  if (!cfg.feedforward) s += ", no feed-forward";
  if (!cfg.ffn_block.empty()) s += ", feed-forward " + cfg.ffn_block;
  return s;
}

class EncoderDecoder final : public TaskModel {
 public:
  EncoderDecoder(const TrainConfig& cfg,
                 const data::Task& task,
                 SequenceLimits limits,
                 Generator& gen)
      : cfg_(cfg), model_(options(cfg, task, limits), gen) {}

  nn::Module& module() override { return model_; }
  std::map<std::string, Generator*> generators() override {
    return {{"dropout", model_.dropout_generator().get()}};
  }
  LossOut loss(const std::vector<data::Example>& batch) override {
    const data::Batch b = data::collate_seq2seq(batch, 0, cfg_.src_eos);
    return {cross_entropy(model_.forward(b.src, b.tgt_in), b.tgt_out, data::kIgnoreIndex,
                          smoothing(cfg_)),
            b.num_target_tokens};
  }
  std::vector<std::vector<int64_t>> generate(const std::vector<data::Example>& batch,
                                             int64_t max_new_tokens) override {
    const data::Batch b = data::collate_seq2seq(batch, 0, cfg_.src_eos);
    return rows_until_eos(model_.greedy_decode(b.src, data::kBos, data::kEos, max_new_tokens));
  }
  std::string describe() override {
    return fmt::format("Seq2SeqTransformer({}, {}): {} parameters", size_text(cfg_),
                       block_text(cfg_), parameter_count(model_));
  }

 private:
  static nn::Seq2SeqOptions options(const TrainConfig& cfg,
                                    const data::Task& task,
                                    SequenceLimits limits) {
    nn::Seq2SeqOptions o;
    o.d_model = cfg.d_model;
    o.nhead = cfg.nhead;
    o.dim_feedforward = cfg.dim_ff;
    o.dropout = cfg.dropout;
    o.norm_first = cfg.norm_first;
    set_block_parts(cfg, o);
    o.num_encoder_layers = o.num_decoder_layers = cfg.num_layers;
    o.positions = positions(cfg);
    o.score = score(cfg);
    o.src_vocab = o.tgt_vocab = task.tokenizer().vocab_size();
    o.max_len = std::max(limits.src, limits.tgt) + 2;  // + BOS / EOS
    o.pad_id = data::kPad;
    return o;
  }
  TrainConfig cfg_;
  nn::Seq2SeqTransformer model_;
};

// GPT for both seq2seq tasks (prompt + answer) and character language modelling.
class DecoderOnly final : public TaskModel {
 public:
  DecoderOnly(const TrainConfig& cfg, const data::Task& task, SequenceLimits limits, Generator& gen)
      : cfg_(cfg),
        lm_(task.kind() == data::TaskKind::kLanguageModel),
        model_(options(cfg, task, limits), gen) {}

  nn::Module& module() override { return model_; }
  std::map<std::string, Generator*> generators() override {
    return {{"dropout", model_.dropout_generator().get()}};
  }
  LossOut loss(const std::vector<data::Example>& batch) override {
    const data::Batch b =
        lm_ ? data::collate_language_model(batch) : data::collate_decoder_only(batch);
    return {cross_entropy(model_.forward(b.tgt_in), b.tgt_out, data::kIgnoreIndex, smoothing(cfg_)),
            b.num_target_tokens};
  }
  // Prompts BOS x SEP differ in length; rows of equal length are generated together.
  std::vector<std::vector<int64_t>> generate(const std::vector<data::Example>& batch,
                                             int64_t max_new_tokens) override {
    std::map<size_t, std::vector<size_t>> by_length;
    for (size_t i = 0; i < batch.size(); ++i) by_length[batch[i].src.size()].push_back(i);
    std::vector<std::vector<int64_t>> out(batch.size());
    Generator unused(0);  // greedy decoding draws nothing
    for (const auto& [len, rows] : by_length) {
      const auto T0 = static_cast<int64_t>(len) + 2;
      Tensor prompt({static_cast<int64_t>(rows.size()), T0});
      for (size_t r = 0; r < rows.size(); ++r) {
        real* p = prompt.data() + static_cast<int64_t>(r) * T0;
        p[0] = data::kBos;
        for (size_t t = 0; t < len; ++t) p[t + 1] = static_cast<real>(batch[rows[r]].src[t]);
        p[T0 - 1] = data::kSep;
      }
      const Tensor full = model_.generate(prompt, max_new_tokens, {}, unused, data::kEos);
      const int64_t n = full.size(1) - T0;
      Tensor fresh({static_cast<int64_t>(rows.size()), std::max<int64_t>(n, 0)});
      for (int64_t r = 0; r < fresh.size(0); ++r)
        for (int64_t t = 0; t < n; ++t) fresh[r * n + t] = full[r * full.size(1) + T0 + t];
      const auto answers = rows_until_eos(fresh);
      for (size_t r = 0; r < rows.size(); ++r) out[rows[r]] = answers[r];
    }
    return out;
  }
  std::string describe() override {
    return fmt::format("DecoderOnlyTransformer({}, {}): {} parameters", size_text(cfg_),
                       block_text(cfg_), parameter_count(model_));
  }

 private:
  static nn::DecoderOnlyOptions options(const TrainConfig& cfg,
                                        const data::Task& task,
                                        SequenceLimits limits) {
    nn::DecoderOnlyOptions o;
    o.vocab_size = task.tokenizer().vocab_size();
    o.max_len =
        task.kind() == data::TaskKind::kLanguageModel ? limits.src : limits.src + limits.tgt + 3;
    o.d_model = cfg.d_model;
    o.nhead = cfg.nhead;
    o.num_layers = cfg.num_layers;
    o.dim_feedforward = cfg.dim_ff;
    o.dropout = cfg.dropout;
    o.positions = positions(cfg);
    if (is_score_bias(cfg)) o.score_bias = resolved_positional(cfg);
    o.score = score(cfg);
    o.norm_first = cfg.norm_first;   // GPT-2's pre-norm unless --norm_first false
    o.feed_forward = cfg.ffn_block;  // a plugin's block, or "" for the GELU block
    set_block_parts(cfg, o);
    return o;
  }
  TrainConfig cfg_;
  bool lm_;
  nn::DecoderOnlyTransformer model_;
};

nn::EncoderOnlyOptions encoder_options(const TrainConfig& cfg,
                                       const data::Task& task,
                                       SequenceLimits limits) {
  nn::EncoderOnlyOptions o;
  o.vocab_size = task.tokenizer().vocab_size();
  o.max_len = limits.src + 1;  // + the BOS ([CLS]) slot
  o.d_model = cfg.d_model;
  o.nhead = cfg.nhead;
  o.num_layers = cfg.num_layers;
  o.dim_feedforward = cfg.dim_ff;
  o.dropout = cfg.dropout;
  o.pad_id = data::kPad;
  o.positions = positions(cfg);
  o.score = score(cfg);
  // BERT itself is post-norm; "transformer" follows --norm_first.
  if (cfg.model == "transformer") o.norm_first = cfg.norm_first;
  set_block_parts(cfg, o);
  return o;
}

// Encoder + linear classifier reading the hidden state of the BOS ([CLS]) slot.
class EncoderClassifierModule final : public nn::Module {
 public:
  EncoderClassifierModule(const nn::EncoderOnlyOptions& o, int64_t classes, Generator& gen)
      : Module("EncoderClassifier") {
    encoder = register_module("encoder", std::make_shared<nn::EncoderOnlyTransformer>(o, gen));
    classifier =
        register_module("classifier", std::make_shared<nn::Linear>(o.d_model, classes, true, gen));
  }
  // ids (B,T) starting with BOS -> logits (B,classes)
  Var forward(const Tensor& ids) {
    const Var h = encoder->encode(ids);  // (B,T,d)
    return classifier->forward(reshape(slice(h, 1, 0, 1), {h.size(0), h.size(2)}));
  }
  std::shared_ptr<nn::EncoderOnlyTransformer> encoder;
  std::shared_ptr<nn::Linear> classifier;
};

class EncoderClassifier final : public TaskModel {
 public:
  EncoderClassifier(const TrainConfig& cfg,
                    const data::Task& task,
                    SequenceLimits limits,
                    Generator& gen)
      : cfg_(cfg), model_(encoder_options(cfg, task, limits), task.num_classes(), gen) {}
  nn::Module& module() override { return model_; }
  std::map<std::string, Generator*> generators() override {
    return {{"dropout", model_.encoder->dropout_generator().get()}};
  }
  LossOut loss(const std::vector<data::Example>& batch) override {
    const data::Batch b = data::collate_classification(batch);
    return {cross_entropy(model_.forward(b.src), b.labels, data::kIgnoreIndex, smoothing(cfg_)),
            b.num_target_tokens};
  }
  std::vector<int64_t> classify(const std::vector<data::Example>& batch) override {
    NoGrad off;
    return predicted_labels(model_.forward(data::collate_classification(batch).src).value());
  }
  std::string describe() override {
    return fmt::format("EncoderOnlyTransformer + classifier ({}): {} parameters", size_text(cfg_),
                       parameter_count(model_));
  }

 private:
  TrainConfig cfg_;
  EncoderClassifierModule model_;
};

// BERT on a character corpus: masked-language-model training. Evaluation masks the held-out
// windows with a generator reset to the same seed every time, so evaluations compare.
class MaskedLanguageModel final : public TaskModel {
 public:
  MaskedLanguageModel(const TrainConfig& cfg,
                      const data::Task& task,
                      SequenceLimits limits,
                      Generator& gen)
      : cfg_(cfg),
        vocab_(task.tokenizer().vocab_size()),
        model_(encoder_options(cfg, task, limits), gen),
        mask_gen_(cfg.seed * 1000 + 3) {}
  nn::Module& module() override { return model_; }
  std::map<std::string, Generator*> generators() override {
    return {{"dropout", model_.dropout_generator().get()}, {"mlm", &mask_gen_}};
  }
  LossOut loss(const std::vector<data::Example>& batch) override {
    const data::Batch b = data::collate_language_model(batch);
    Generator eval_gen(cfg_.seed * 1000 + 4);
    const data::MlmBatch m =
        data::mlm_mask(b.tgt_in, vocab_, model_.is_training() ? mask_gen_ : eval_gen);
    return {cross_entropy(model_.forward(m.input), m.labels, data::kIgnoreIndex, smoothing(cfg_)),
            m.num_selected};
  }
  std::string describe() override {
    return fmt::format("EncoderOnlyTransformer MLM ({}): {} parameters", size_text(cfg_),
                       parameter_count(model_));
  }

 private:
  TrainConfig cfg_;
  int64_t vocab_;
  nn::EncoderOnlyTransformer model_;
  Generator mask_gen_;
};

}  // namespace

std::unique_ptr<TaskModel> make_transformer_model(const TrainConfig& cfg,
                                                  const data::Task& task,
                                                  SequenceLimits limits,
                                                  Generator& gen) {
  const data::TaskKind kind = task.kind();
  if (kind == data::TaskKind::kClassification)
    return std::make_unique<EncoderClassifier>(cfg, task, limits, gen);
  if (cfg.model == "bert") return std::make_unique<MaskedLanguageModel>(cfg, task, limits, gen);
  if (cfg.model == "gpt") return std::make_unique<DecoderOnly>(cfg, task, limits, gen);
  return std::make_unique<EncoderDecoder>(cfg, task, limits, gen);
}

}  // namespace attn::train
