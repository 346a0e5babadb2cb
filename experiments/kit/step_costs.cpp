#include "experiments/kit/step_costs.h"

#include "autograd/error.h"
#include "experiments/common/interleaved_timing.h"

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

}  // namespace attn::experiments::kit
