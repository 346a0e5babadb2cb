// The experiment side of train::fit: a variant's training settings wired to the run.
//
//   train::FitSettings s = kit::fit_settings(ctx, "rope", steps);  // name, metrics file, progress
//   s.batch_size = batch;
//   s.optimizer = {.lr = lr, .schedule = "cosine", .warmup = warmup, .clip = 1.0};
//   train::fit(model, s, loss_fn, eval_fn);
//
// The metrics of each trained variant go to <run folder>/training/<variant>.csv (loss, learning
// rate and evaluations, train::Trainer's format); a run that writes no folder (unit tests, the
// ranks after the first under mpirun) writes none. The progress bar shows on a terminal only, so
// logs and the CLI checks read as before.
#pragma once

#include <cstdint>
#include <string>

#include "train/fit.h"

namespace attn::experiments {
class RunContext;
}

namespace attn::experiments::kit {

// Settings for training `variant` for `steps` steps in this run (the rest at their defaults).
train::FitSettings fit_settings(const RunContext& ctx, const std::string& variant, int64_t steps);

// The file name of a variant's metrics: lower case, [a-z0-9_-], other characters as '_'.
std::string variant_file_stem(const std::string& variant);

}  // namespace attn::experiments::kit
