// The experiment side of train::fit: a variant's training settings wired to the run.
//
//   train::FitSettings s = kit::fit_settings(ctx, "rope", read_optimizer(cfg));  // the group's
//   train::fit(model, s, loss_fn, eval_fn);           // steps, batch_size, lr, schedule, ...
//   train::FitSettings t = kit::fit_settings(ctx, "probe", 200);   // or by hand:
//   t.batch_size = 32;  t.optimizer = {.lr = 1e-3, .schedule = "cosine", .warmup = 20};
//
// The metrics of each trained variant go to <run folder>/training/<variant>.csv (loss, learning
// rate and evaluations, train::Trainer's format); a run that writes no folder (unit tests, the
// ranks after the first under mpirun) writes none. The progress bar shows on a terminal only, so
// logs and the CLI checks read as before.
#pragma once

#include <cstdint>
#include <string>

#include "train/fit.h"
#include "train/options/groups.h"

namespace attn::experiments {
class RunContext;
}

namespace attn::experiments::kit {

// Settings for training `variant` for `steps` steps in this run (the rest at their defaults).
train::FitSettings fit_settings(const RunContext& ctx, const std::string& variant, int64_t steps);

// The same with the optimizer group's fields (train/options/groups.h): steps, batch_size, lr,
// schedule, warmup, weight_decay, clip. Adam, or AdamW when weight decay is set (at zero decay
// the two are the same update).
train::FitSettings fit_settings(const RunContext& ctx,
                                const std::string& variant,
                                const train::options::OptimizerSettings& o);

// The file name of a variant's metrics: lower case, [a-z0-9_-], other characters as '_'.
std::string variant_file_stem(const std::string& variant);

}  // namespace attn::experiments::kit
