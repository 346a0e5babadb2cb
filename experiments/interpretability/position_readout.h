// A small bidirectional encoder that answers at one position of a fixed-length sentence, shared
// by the interpretability toys (winograd-shortcut reads the answer at "it", context-bank at
// "bank"): the vector there, its attention rows and the token embedding can all be read back.
//
//   Generator gen(1);
//   PositionReadout m("BankModel", read_model(cfg), {.vocabulary = 30, .length = 8,
//                                                    .read_at = 3, .classes = 16}, gen);
//   Var logits = m.forward(ids);              // ids (B,8) -> (B,16)
//   Tensor h = m.read_vector(ids);            // (B,d): what the readout sees, no gradient
//   Tensor rows = m.attention_rows(0, ids);   // (B,8): layer 0's row from position 3
//   Tensor e = m.static_embedding(ids);       // (B,d): the token embedding at position 3
//
// The model: token embeddings plus learned positions, num_layers pre-norm encoder layers
// (bidirectional, no dropout), a final LayerNorm, and a linear readout of the vector at read_at.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "autograd/generator.h"
#include "autograd/var.h"
#include "experiments/config.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/module_list.h"
#include "nn/norms.h"
#include "nn/positional/learned.h"
#include "nn/transformer/encoder_layer.h"
#include "train/options/groups.h"

namespace attn::experiments {

struct ReadoutShape {
  int64_t vocabulary = 0;  // token ids 0 .. vocabulary-1
  int64_t length = 0;      // every sentence's length T
  int64_t read_at = 0;     // the position whose vector is read out
  int64_t classes = 0;     // the readout's width
};

// How context-bank and winograd-shortcut train their readouts: the model and optimizer groups,
// the eval group's held-out size and interval, --seeds models, and the run's seed.
struct ReadoutTraining {
  ReadoutTraining(const Config& cfg, uint64_t run_seed);
  // Model i draws its weights from seed_of(i) and its batches from seed_of(i) + 1.
  uint64_t seed_of(int64_t i) const { return seed + 1000 * static_cast<uint64_t>(i); }

  train::options::ModelSettings model;
  train::options::OptimizerSettings optimizer;
  int64_t eval_size = 0, eval_every = 0, seeds = 0;
  uint64_t seed = 0;
};

class PositionReadout : public nn::Module {
 public:
  PositionReadout(const std::string& name,
                  const train::options::ModelSettings& m,
                  const ReadoutShape& shape,
                  Generator& gen);
  Var forward(const Tensor& ids);  // (B,T) -> logits (B, classes)
  // The final-normed vector at read_at, (B,d), without gradient.
  Tensor read_vector(const Tensor& ids);
  // Layer `layer`'s attention row from read_at over the T positions, heads averaged: (B,T).
  Tensor attention_rows(int64_t layer, const Tensor& ids);
  // The token embedding of the word at read_at (no positions, no context): (B,d).
  Tensor static_embedding(const Tensor& ids);
  int64_t num_layers() const { return static_cast<int64_t>(layers_->size()); }

 private:
  Var encode(const Tensor& ids);  // (B,d) at read_at, after the final LayerNorm

  int64_t d_model_;
  ReadoutShape shape_;
  std::shared_ptr<nn::Embedding> tok_;
  std::shared_ptr<nn::LearnedPositionalEmbedding> pos_;
  std::shared_ptr<nn::ModuleList<nn::TransformerEncoderLayer>> layers_;
  std::shared_ptr<nn::LayerNorm> norm_;
  std::shared_ptr<nn::Linear> head_;
};

}  // namespace attn::experiments
