// Everything an experiment file needs, in one include (as torch/torch.h is for PyTorch code):
// the standard containers, math and clocks, fmt, tensors and the autograd functions, the
// generator and thread count, attn::Error, batches, the common layers (Linear, Embedding, scaled
// dot-product attention), the options (Config, groups), Experiment and RunContext, the report
// writers (Table, LinePlot and the other charts, Heatmap, DocumentComparison, number formats),
// the kit's helpers (summaries, plot frames, evaluation, timing, log-log slopes, values,
// side_by_side jobs, token labels, "mean ± sd" cells, the constant-guess baseline) and train::fit.
//
//   #include "experiments/kit/kit.h"
//   #include "nn/linear.h"                  // then only what is particular to this experiment
//
//   namespace attn::experiments {
//   void run(const Config& cfg, RunContext& ctx) {
//     Generator gen(ctx.seed());
//     LinePlot p = kit::line_plot("Loss", "step", "loss", kit::Axes::kLogY);
//     ...
//   }
//   }  // namespace attn::experiments
//
// Library code below experiments/ (and the headers of common/) include what they use one by one:
// this header is for the experiment bodies, so that each opens with what makes it different.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/generator.h"
#include "autograd/kernels/parallel.h"
#include "autograd/mode.h"
#include "autograd/tape.h"
#include "autograd/tensor.h"
#include "data/batch.h"
#include "experiments/common/interleaved_timing.h"
#include "experiments/common/loglog.h"
#include "experiments/common/values.h"
#include "experiments/config.h"
#include "experiments/experiment.h"
#include "experiments/kit/char_lm.h"
#include "experiments/kit/chunks.h"
#include "experiments/kit/constant_guess.h"
#include "experiments/kit/evaluation.h"
#include "experiments/kit/fit.h"
#include "experiments/kit/language_model_steps.h"
#include "experiments/kit/numbered_heatmap.h"
#include "experiments/kit/percent.h"
#include "experiments/kit/plot.h"
#include "experiments/kit/ranking.h"
#include "experiments/kit/seed_grid.h"
#include "experiments/kit/side_by_side.h"
#include "experiments/kit/spread_text.h"
#include "experiments/kit/summary.h"
#include "experiments/kit/token_labels.h"
#include "experiments/report/charts.h"
#include "experiments/report/compare.h"
#include "experiments/report/heatmap.h"
#include "experiments/report/scale.h"
#include "experiments/report/table.h"
#include "experiments/run_context.h"
#include "nn/attention/sdpa.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "train/fit.h"
