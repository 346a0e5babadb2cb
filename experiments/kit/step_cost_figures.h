// The two figures of a kit::StepCosts measurement, a line per model against T on log-log axes:
// "step_time", the median time per training step, and "peak_memory", the exact peak tensor
// bytes of one forward + backward (attention-zoo, linear-zoo and sparse-challenge show both).
//
//   kit::StepCosts costs(models.size());   // ... costs.add(T, ...) per length
//   kit::step_cost_figures(ctx, costs, {"banded (window)", "dense (full)"}, /*batch=*/2);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "experiments/kit/plot.h"
#include "experiments/kit/step_costs.h"
#include "experiments/run_context.h"

namespace attn::experiments::kit {

// labels[i] names model i of `costs`; batch is the timed step's batch (in the title).
inline void step_cost_figures(RunContext& ctx,
                              const StepCosts& costs,
                              const std::vector<std::string>& labels,
                              int64_t batch) {
  LinePlot time = line_plot(fmt::format("Time per training step (batch {})", batch),
                            "sequence length T", "ms per step (median)", Axes::kLogLog);
  LinePlot memory = line_plot("Peak tensor memory of one forward + backward", "sequence length T",
                              "MiB (exact tensor bytes)", Axes::kLogLog);
  for (size_t i = 0; i < labels.size(); ++i) {
    time.series.push_back({labels[i], costs.ts, costs.ms[i]});
    memory.series.push_back({labels[i], costs.ts, costs.mib[i]});
  }
  ctx.figure("step_time", line_plot_svg(time), "Time per training step against T, log-log");
  ctx.figure("peak_memory", line_plot_svg(memory), "Peak tensor memory against T, log-log");
}

}  // namespace attn::experiments::kit
