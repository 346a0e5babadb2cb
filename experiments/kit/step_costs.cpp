#include "experiments/kit/step_costs.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "experiments/common/interleaved_timing.h"
#include "experiments/kit/plot.h"
#include "experiments/run_context.h"

namespace attn::experiments::kit {

StepCosts::StepCosts(size_t models) : ms(models), min_ms(models), mib(models) {}

void StepCosts::add(int64_t length,
                    const std::vector<std::function<void()>>& measured,
                    const std::vector<std::function<void()>>& timed,
                    int reps,
                    double budget_s) {
  if (measured.size() != ms.size() || timed.size() != ms.size())
    throw Error("kit::StepCosts::add: one measured and one timed work per model");
  for (size_t i = 0; i < measured.size(); ++i)
    mib[i].push_back(static_cast<double>(probe_.measure(measured[i]).tensor_bytes) /
                     (1024.0 * 1024.0));
  const std::vector<Timing> t = time_interleaved(timed, reps, budget_s);
  for (size_t i = 0; i < timed.size(); ++i) {
    ms[i].push_back(1e3 * t[i].median_s);
    min_ms[i].push_back(1e3 * t[i].min_s);
  }
  ts.push_back(static_cast<double>(length));
}

double StepCosts::slope_from() const {
  return ts[ts.size() >= 3 ? ts.size() - 3 : 0];
}

void step_cost_figures(RunContext& ctx,
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
