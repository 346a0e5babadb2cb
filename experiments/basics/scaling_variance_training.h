// scaling-variance, part 3: training with and without 1/sqrt(d_k) at d_k = --train_dk.
//
//   DocumentComparison cmp(...);
//   if (cfg.get_int("steps") > 0) scaling_variance_training(cfg, ctx, cmp);  // adds 2 rows
#pragma once

#include "experiments/config.h"
#include "experiments/report/compare.h"
#include "experiments/run_context.h"

namespace attn::experiments {

// Trains both models, reports the loss, accuracy and gradient table, the figures and the CSV,
// and adds the two training claims to `cmp`.
void scaling_variance_training(const Config& cfg, RunContext& ctx, DocumentComparison& cmp);

}  // namespace attn::experiments
