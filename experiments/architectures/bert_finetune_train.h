// bert-finetune's trainings: BERT pre-training (masked LM + next-sentence prediction) on the
// built-in corpus, then one classification task trained twice with the same steps and data, on
// the pre-trained encoder and on a fresh one.
//
//   Pretrained p = pretrain(w, ctx, pool, seed_index);         // p.nsp_accuracy, p.encoder
//   Curve tuned = classify(w, ctx, pool, p.encoder, "fine-tuned seed 1", seed);
//   Curve scratch = classify(w, ctx, pool, fresh_encoder(w, pool, init), "scratch seed 1", seed);
//
// Next-sentence prediction reads the [CLS] position's hidden state through a two-way linear head;
// the downstream classifier reads the mean of the hidden states through a new one (after
// NSP-weighted pre-training [CLS] holds the subject, which NSP needs and the downstream label
// does not).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "experiments/architectures/bert_finetune_data.h"
#include "experiments/run_context.h"
#include "nn/transformer/encoder_only.h"
#include "train/options/groups.h"

namespace attn::experiments::bert_pretrain {

struct Settings {
  train::options::ModelSettings model;
  train::options::OptimizerSettings pretrain;  // the optimizer group: pre-training
  int64_t finetune_steps = 0, finetune_batch = 0, labelled = 0;
  double finetune_lr = 0;
  double nsp_weight = 1;  // the next-sentence loss's weight in the pre-training loss
  int64_t eval_size = 0, eval_every = 0, seeds = 0;
  uint64_t seed = 0;
};

// Accuracy on held-out data at every evaluation.
struct Curve {
  std::vector<double> steps, accuracy;
  double last() const { return accuracy.back(); }
};

struct Pretrained {
  std::shared_ptr<nn::EncoderOnlyTransformer> encoder;
  Curve nsp, mlm;           // held-out next-sentence and masked-token accuracy
  double mlm_constant = 0;  // the best constant guess on the same masked positions
};

// A fresh BERT encoder for the pool's vocabulary and pair length (no dropout).
std::shared_ptr<nn::EncoderOnlyTransformer> fresh_encoder(const Settings& w,
                                                          const SentencePool& pool,
                                                          Generator& init);

// Masked LM + next-sentence prediction on the pool's training pairs for w.pretrain.steps steps.
Pretrained pretrain(const Settings& w,
                    RunContext& ctx,
                    const SentencePool& pool,
                    int64_t seed_index);

// Trains `encoder` plus a new head on w.labelled training sentences (drawn with data_seed) for
// w.finetune_steps steps; held-out accuracy on w.eval_size held-out sentences.
Curve classify(const Settings& w,
               RunContext& ctx,
               const SentencePool& pool,
               std::shared_ptr<nn::EncoderOnlyTransformer> encoder,
               const std::string& variant,
               uint64_t data_seed);

}  // namespace attn::experiments::bert_pretrain
