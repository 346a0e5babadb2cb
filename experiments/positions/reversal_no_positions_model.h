// reversal-no-positions' model and its training (experiments/positions/reversal_no_positions.cpp):
// embedding (+ positions) -> one self-attention layer -> linear readout, trained on fixed-length
// reversal, and the measurements taken on it.
//
//   no_positions::Trained r = no_positions::train(no_positions::Positions::kLearned, s, task,
//                                                  held_out, seed);
//   r.final.accuracy;  no_positions::equivariance_error(*r.model, ids, perm);
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "data/tasks/sequence.h"

namespace attn::experiments::no_positions {

enum class Positions { kNone, kLearned, kSinusoidal };
const char* name_of(Positions p);

// Embedding (+ positions) -> one self-attention layer -> linear readout. No FFN, no residual,
// no norm: the exercise's "single self-attention layer with no other components".
class OneLayerAttention;

// A batch of reversal examples as model ids in [0, V) (the task's ids minus its specials).
struct Batch {
  Tensor ids, targets;  // (B,T) each
};
Batch sample_batch(const data::SequenceTask& task, int64_t batch, Generator& gen);

// The best accuracy any function g(x_i, multiset) can reach on random sequences (see
// reversal_no_positions.cpp's opening comment), computed exactly.
double order_free_ceiling(int64_t seq_len, int64_t alphabet);

// The first n rows of a (B,T) tensor.
Tensor slice_rows(const Tensor& x, int64_t n);

struct Evaluation {
  double loss = 0, accuracy = 0, sequence_accuracy = 0;
  double anti_diagonal = 0;  // mean attention weight (over heads) of query i on key T-1-i
  std::vector<double> per_position;
};

struct Trained {
  Positions pos;
  std::shared_ptr<OneLayerAttention> model;
  std::vector<double> loss;                       // training loss per step
  std::vector<double> eval_steps, eval_accuracy;  // held-out accuracy during training
  Evaluation final;
  int64_t first_step_50 = -1;  // first evaluated step with accuracy >= 0.5
  int64_t first_step_90 = -1;  // and >= 0.9
};

struct Settings {
  int64_t vocab, seq_len, d_model, heads, steps, batch, eval_every;
  double lr;
};

// Trains one model (Adam at a constant rate), evaluating every s.eval_every steps on the first
// (up to) 500 held-out sequences and at the end on all of them.
Trained train(Positions pos,
              const Settings& s,
              const data::SequenceTask& task,
              const Batch& held_out,
              uint64_t seed);

// max |f(X P)[:, i] - f(X)[:, perm[i]]| over the logits: ~0 means equivariant.
double equivariance_error(const OneLayerAttention& model,
                          const Tensor& ids,
                          const std::vector<int64_t>& perm);

// The attention weights of a (1,T) input averaged over heads -> (T,T).
Tensor head_mean_attention(const OneLayerAttention& model, const Tensor& one);

}  // namespace attn::experiments::no_positions
