// Independent jobs of one experiment (the variants it trains, its seeds, its model sizes) run
// side by side, one core each, instead of one after the other with every core on each.
//
//   std::vector<Accuracy> acc = kit::side_by_side(variants.size(), [&](size_t i) {
//     Generator gen(seed);                       // each job draws from its own generator
//     auto model = variants[i].build(gen);
//     train::fit(*model, kit::fit_settings(ctx, variants[i].name, steps), loss, eval);
//     return evaluate(*model);                   // returned, never written to ctx here
//   });
//   for (size_t i = 0; i < acc.size(); ++i) ctx.result(..., acc[i]);   // in job order
//
// Why: the chapter experiments train small models, whose ops are too small to split across
// cores. At 2 threads most of their time went to waking the second thread and to its waiting
// (docs/performance.md, "The catalogue before and after"), and one thread was faster than two.
// Two jobs on one thread each keep both cores busy with no hand-over at all: depth-hops
// `--quick` ran in 1.44 s per copy with two copies at once, against 1.67 s for one copy on two
// threads. The numbers do not change: every kernel gives the same bits at any thread count
// (issue 32), and each job owns its generator, model and tape (the tape is per thread).
//
// The rules for a job, which make the order the jobs run in invisible:
//   - it draws only from generators it creates (never one shared with another job or the
//     caller), and returns what it measured instead of writing to the RunContext;
//   - it may call train::fit with kit::fit_settings (each variant its own metrics file; the
//     progress bar is off inside a job, as two bars would overwrite each other);
//   - it must not time anything: a timing beside another job measures the neighbour too. Timing
//     parts stay sequential (kit::InterleavedTiming).
// Jobs run one after the other, each with every thread, when only one thread is set, when the
// run is one of several MPI ranks (the ranks' collective calls must happen in one order), or
// inside another side_by_side job. The first failing job (lowest index) is rethrown after every
// started job has finished; jobs not started yet are skipped.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <type_traits>
#include <vector>

namespace attn::experiments::kit {

// True on a thread that runs a side_by_side job (while it runs).
bool in_side_by_side_job();

// How many jobs would run at once for `jobs` jobs here: min(jobs, threads), or 1 under the
// conditions above.
size_t side_by_side_width(size_t jobs);

// Calls job(i) for every i in [0, jobs), side_by_side_width(jobs) at a time, and returns when
// all are done (rethrowing the first failure).
void run_side_by_side(size_t jobs, const std::function<void(size_t)>& job);

// The same with a result per job, in job order.
template <class Job>
auto side_by_side(size_t jobs, Job&& job) -> std::vector<std::invoke_result_t<Job&, size_t>> {
  using Result = std::invoke_result_t<Job&, size_t>;
  std::vector<std::optional<Result>> slots(jobs);
  run_side_by_side(jobs, [&](size_t i) { slots[i].emplace(job(i)); });
  std::vector<Result> results;
  results.reserve(jobs);
  for (std::optional<Result>& r : slots) results.push_back(std::move(*r));
  return results;
}

}  // namespace attn::experiments::kit
