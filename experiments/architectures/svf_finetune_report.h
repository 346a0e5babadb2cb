// svf-finetune's report: results.json entries, the tables, the figure and the comparison with
// 004 §4.2, from every seed's outcome (svf_finetune_runs.h).
//
//   std::vector<svf::SeedOutcome> seeds = ...;   // one svf::run_seed per seed
//   svf::report(w, seeds, ctx);
#pragma once

#include <vector>

#include "experiments/architectures/svf_finetune_runs.h"

namespace attn::experiments {
class RunContext;
}

namespace attn::experiments::svf {

void report(const Settings& w, const std::vector<SeedOutcome>& seeds, RunContext& ctx);

}  // namespace attn::experiments::svf
