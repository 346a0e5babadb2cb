// One training run of a scaling sweep: a GPT character model trained on the built-in corpus
// with held-out losses taken at chosen steps, kept per group of held-out windows so that a
// bootstrap can resample them.
//
//   train::TrainConfig tc;  tc.task = "charlm";  tc.model = "gpt";  tc.d_model = 32;  ...
//   ScalingCurve c = train_scaling_run(tc, /*eval_steps=*/{25, 50, 100, 200}, /*groups=*/16);
//   c.non_embedding_params;   // Kaplan et al.'s N: embeddings and the output layer left out
//   c.tokens[k];              // training tokens processed by eval_steps[k]
//   c.loss(k);                // mean held-out loss (nats per character) at that step
//   c.group_loss[k][g];       // the same over group g of the held-out windows only
//
// The training is the train command's (train/run/run_train.cpp) without its files: the same
// task setup, model adapter, seeded example stream, AdamW and gradient clipping, with the
// learning rate from tc.schedule. The evaluation happens inside the loop at eval_steps, so one
// run gives a whole loss-against-tokens curve.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/run/train_config.h"

namespace attn::experiments {

struct ScalingCurve {
  int64_t d_model = 0, layers = 0;
  uint64_t seed = 0;
  int64_t params = 0;                // every parameter
  int64_t non_embedding_params = 0;  // without tok_emb, pos_emb and lm_head
  int64_t train_chars = 0;           // characters of training text (whole windows of it)
  std::vector<int64_t> steps, tokens;
  std::vector<std::vector<double>> group_loss;  // [checkpoint][group]
  double seconds = 0;                           // wall time of the run, evaluations included
  double loss(size_t checkpoint) const;         // mean over the groups
};

// The parameters a scaling law counts: all but the token and position embeddings and the
// output projection (its weight is vocabulary x d_model, an embedding in all but name).
int64_t non_embedding_parameters(const std::vector<std::pair<std::string, int64_t>>& sizes);

// Trains tc (task charlm, a transformer-family model; validated first) for tc.steps steps and
// evaluates at every step in eval_steps (increasing, each in [1, tc.steps]). The held-out
// windows (tc.eval_size of them) are cut into `groups` consecutive groups of equal size (the
// remainder is dropped). Throws attn::Error when the training loss turns non-finite.
ScalingCurve train_scaling_run(const train::TrainConfig& tc,
                               const std::vector<int64_t>& eval_steps,
                               int64_t groups);

}  // namespace attn::experiments
