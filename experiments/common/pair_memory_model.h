// A one-layer attention model of associative recall (data/tasks/recall.h), small enough to train
// in seconds, with the 1/sqrt(d_k) factor as a switch: the scaling-variance experiment trains
// it twice from the same initial weights on the same batches, once with and once without.
//
//   data::RecallTask task({.num_pairs = 8});
//   PairMemoryModel model(task.tokenizer().vocab_size(), /*d=*/256, /*scaled=*/true, gen);
//   Var loss = model.loss(batch);                       // batch of recall examples
//   RecallRun r = train_pair_memory(task, {.d = 256, .scaled = false, .steps = 600}, seed);
//   r.losses;  r.eval_accuracy;  r.score_grad_norm;
//
// Each stored pair (key, value) becomes one memory slot m = E_key[key] + E_val[value]; the
// queried key becomes the query q = E_key[key]. One single-head attention (d_k = d) reads the
// slots and a linear layer maps the result to the vocabulary:
//   logits = head(attention(q, m, m))          attention = softmax(q W_q (m W_k)^T * s) m W_v
// with s = 1/sqrt(d) (scaled) or 1. The answer is in the slot whose key matches, so the model
// must learn W_q, W_k that make exactly that score the largest: one content lookup.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/generator.h"
#include "data/tasks/recall.h"
#include "nn/attention/multihead_attention.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace attn::experiments {

class PairMemoryModel : public nn::Module {
 public:
  PairMemoryModel(int64_t vocab, int64_t d, bool scaled, Generator& gen);

  // Logits (B, vocab) for recall examples (src = k1 v1 ... kn vn ? q).
  Var forward(const std::vector<data::Example>& batch);
  Var loss(const std::vector<data::Example>& batch);  // mean cross-entropy against labels
  // The attention weights of the last forward, (B,1,1,n): one row per example.
  const Tensor& last_weights() const { return attn->last_weights(); }

  std::shared_ptr<nn::Embedding> key_emb, val_emb;
  std::shared_ptr<nn::MultiheadAttention> attn;
  std::shared_ptr<nn::Linear> head;
};

struct PairMemoryConfig {
  int64_t d = 256;
  bool scaled = true;
  int64_t pairs = 8;  // key-value pairs per example
  int64_t steps = 600;
  int64_t batch = 64;
  double lr = 1e-3;  // Adam
  int64_t eval_every = 50;
  int64_t eval_size = 512;
};

struct RecallRun {
  std::vector<double> losses;           // one per step
  std::vector<double> score_grad_norm;  // |dL/dW_q| + |dL/dW_k| (Frobenius), one per step
  std::vector<double> eval_steps, eval_accuracy, eval_entropy;  // held-out, every eval_every
  double seconds = 0;
};

// Trains from weights seeded by `seed` on batches drawn from `seed + 1` (the same for either
// setting of cfg.scaled), and evaluates on a held-out set drawn from `seed + 2`.
RecallRun train_pair_memory(const PairMemoryConfig& cfg, uint64_t seed);

}  // namespace attn::experiments
