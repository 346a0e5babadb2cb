#include "experiments/architectures/bert_finetune_train.h"

#include <fmt/format.h>

#include "autograd/functional.h"
#include "autograd/mode.h"
#include "data/mlm.h"
#include "experiments/kit/constant_guess.h"
#include "experiments/kit/evaluation.h"
#include "experiments/kit/fit.h"
#include "nn/linear.h"
#include "train/fit.h"

namespace attn::experiments::bert_pretrain {

namespace {

// The [CLS] position's hidden state: h (B,T,d) -> (B,d).
Var cls_state(const Var& h) {
  return reshape(slice(h, 1, 0, 1), {h.shape()[0], h.shape()[2]});
}

// The mean of the hidden states over a row's tokens (padding left out): h (B,T,d), ids (B,T) ->
// (B,d).
Var mean_state(const Var& h, const Tensor& ids) {
  const int64_t rows = ids.shape()[0], length = ids.shape()[1];
  Tensor weights({rows, length, 1});
  for (int64_t r = 0; r < rows; ++r) {
    real tokens = 0;
    for (int64_t t = 0; t < length; ++t) tokens += ids[r * length + t] != data::kPad;
    for (int64_t t = 0; t < length; ++t)
      weights[r * length + t] = ids[r * length + t] != data::kPad ? 1 / tokens : 0;
  }
  return sum(mul(h, Var(weights)), 1);
}

// An encoder with a two-way head on [CLS]: next-sentence prediction during pre-training, the
// downstream label during fine-tuning (a new head each time, as BERT's fine-tuning adds one).
class EncoderWithHead : public nn::Module {
 public:
  EncoderWithHead(std::shared_ptr<nn::EncoderOnlyTransformer> enc, Generator& gen)
      : Module("EncoderWithHead") {
    encoder = register_module("encoder", std::move(enc));
    const int64_t d = encoder->options().d_model;
    head = register_module("head", std::make_shared<nn::Linear>(d, 2, true, gen));
  }
  // ids (B,T) -> hidden states (B,T,d), padding hidden from attention.
  Var encode(const Tensor& ids) { return encoder->encode(ids); }
  // hidden states -> (B,2) logits of the head on [CLS] (next-sentence prediction).
  Var classify(const Var& h) const { return head->forward(cls_state(h)); }
  // hidden states of ids -> (B,2) logits of the head on the mean over the tokens (downstream).
  Var classify_mean(const Var& h, const Tensor& ids) const {
    return head->forward(mean_state(h, ids));
  }
  // hidden states -> (B,T,V) masked-LM logits (the tied head).
  Var mlm(const Var& h) const { return encoder->mlm_head->forward(h, encoder->tok_emb->weight); }

  std::shared_ptr<nn::EncoderOnlyTransformer> encoder;
  std::shared_ptr<nn::Linear> head;
};

// The masked-LM accuracy of held-out pairs (masked once, fixed) and the best constant guess.
struct MaskedHeldOut {
  data::MlmBatch masked;
  double constant = 0;
};

MaskedHeldOut mask_held_out(const Batch& pairs, int64_t vocab, uint64_t seed) {
  Generator gen(seed);
  data::MlmBatch masked = data::mlm_mask(pairs.ids, vocab, gen);
  const double constant = kit::constant_guess(masked.labels, data::kIgnoreIndex).accuracy;
  return {std::move(masked), constant};
}

void append(Curve& c, int64_t step, double accuracy) {
  c.steps.push_back(static_cast<double>(step));
  c.accuracy.push_back(accuracy);
}

}  // namespace

std::shared_ptr<nn::EncoderOnlyTransformer> fresh_encoder(const Settings& w,
                                                          const SentencePool& pool,
                                                          Generator& init) {
  nn::EncoderOnlyOptions o;
  o.vocab_size = pool.vocab_size();
  o.pad_id = data::kPad;
  o.max_len = pool.pair_length();
  o.d_model = w.model.d_model;
  o.nhead = w.model.nhead;
  o.num_layers = w.model.num_layers;
  o.dim_feedforward = w.model.dim_ff;
  o.dropout = 0;  // deterministic trainings: the spread over seeds is the only noise
  return std::make_shared<nn::EncoderOnlyTransformer>(o, init);
}

Pretrained pretrain(const Settings& w,
                    RunContext& ctx,
                    const SentencePool& pool,
                    int64_t seed_index) {
  const uint64_t seed = w.seed + 1000 * static_cast<uint64_t>(seed_index);
  Generator init(seed), data(seed + 1), held_gen(seed + 2);
  EncoderWithHead model(fresh_encoder(w, pool, init), init);
  const Batch held = pool.draw_pairs(w.eval_size, Part::kHeldOut, held_gen);
  const MaskedHeldOut held_mlm = mask_held_out(held, pool.vocab_size(), seed + 3);
  train::FitSettings s =
      kit::fit_settings(ctx, fmt::format("pre-training seed {}", seed_index + 1), w.pretrain);
  // Ten evaluations of the held-out pairs (each costs about ten training steps).
  s.eval_every = std::max<int64_t>(1, w.pretrain.steps / 10);
  Pretrained p;
  // One step: BERT's loss, the masked-LM cross-entropy plus the next-sentence cross-entropy
  // (weighted by w.nsp_weight; BERT's weight is 1).
  (void)train::fit(
      model, s,
      [&](const train::BatchPart& part) {
        const Batch b = pool.draw_pairs(s.batch_size, Part::kTrain, data);
        const data::MlmBatch m = data::mlm_mask(b.ids, pool.vocab_size(), data);
        const Var h = model.encode(part.rows(m.input));
        const Var mlm = cross_entropy(model.mlm(h), part.rows(m.labels), data::kIgnoreIndex);
        const Var nsp = cross_entropy(model.classify(h), part.rows(b.labels));
        return train::StepLoss{mlm + nsp * w.nsp_weight};
      },
      [&](int64_t step) {
        NoGrad off;
        const double nsp =
            kit::accuracy(model.classify(model.encode(held.ids)).value(), held.labels);
        const Tensor logits = model.mlm(model.encode(held_mlm.masked.input)).value();
        const double mlm = kit::accuracy(logits, held_mlm.masked.labels, data::kIgnoreIndex);
        append(p.nsp, step, nsp);
        append(p.mlm, step, mlm);
        return train::Metrics{{"nsp_accuracy", nsp}, {"mlm_accuracy", mlm}};
      });
  p.encoder = model.encoder;
  p.mlm_constant = held_mlm.constant;
  return p;
}

Curve classify(const Settings& w,
               RunContext& ctx,
               const SentencePool& pool,
               std::shared_ptr<nn::EncoderOnlyTransformer> encoder,
               const std::string& variant,
               uint64_t data_seed) {
  Generator head_init(data_seed + 5), pick(data_seed + 6), data(data_seed + 7);
  EncoderWithHead model(std::move(encoder), head_init);
  // The same labelled sentences and the same batches for both encoders of a seed.
  const std::vector<Sentence>& train_part = pool.part(Part::kTrain);
  std::vector<Sentence> labelled;
  for (int64_t i = 0; i < w.labelled; ++i)
    labelled.push_back(
        train_part[static_cast<size_t>(pick.randint(static_cast<int64_t>(train_part.size())))]);
  const Batch held = pool.draw_sentences(w.eval_size, Part::kHeldOut, pick);
  train::FitSettings s = kit::fit_settings(ctx, variant, w.finetune_steps);
  s.batch_size = w.finetune_batch;
  s.optimizer.lr = w.finetune_lr;
  s.eval_every = w.eval_every;
  Curve c;
  (void)train::fit(
      model, s,
      [&](const train::BatchPart& part) {
        std::vector<Sentence> chosen;  // a batch of the labelled sentences, with replacement
        for (int64_t i = 0; i < s.batch_size; ++i)
          chosen.push_back(labelled[static_cast<size_t>(data.randint(w.labelled))]);
        const Batch b = pool.sentences(chosen);
        const Tensor ids = part.rows(b.ids);
        return train::StepLoss{
            cross_entropy(model.classify_mean(model.encode(ids), ids), part.rows(b.labels))};
      },
      [&](int64_t step) {
        NoGrad off;
        const double a = kit::accuracy(
            model.classify_mean(model.encode(held.ids), held.ids).value(), held.labels);
        append(c, step, a);
        return train::Metrics{{"accuracy", a}};
      });
  return c;
}

}  // namespace attn::experiments::bert_pretrain
