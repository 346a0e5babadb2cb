// Experiment: what `attnlab list` shows and `attnlab run <name>` runs.
//
//   // experiments/basics/worked_example.cpp
//   namespace attn::experiments {
//   Experiment worked_example() {
//     Experiment e;
//     e.name = "worked-example";
//     e.source = "002 §39.2.1";
//     e.purpose = "Self-attention by hand on 3 tokens, every intermediate matrix";
//     e.config.add_real("scale", 1 / std::sqrt(2.0), "score scale 1/sqrt(d_k)");
//     e.quick = {};                          // overrides for --quick (tests), if any
//     e.nondeterministic = {"fits an exponent to measured times", {"growth_exponent"}};  // if so
//     e.run = [](const Config& cfg, RunContext& ctx) { ... ctx.compare(...); };
//     return e;
//   }
//   }  // namespace attn::experiments
//
// and ONE line in experiments/registry.cpp: `X(worked_example)`. See docs/adding-an-experiment.md.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/config.h"

namespace attn::experiments {

class RunContext;

// What of an experiment's results.json hangs on the clock, for the determinism test
// (tests/cli/experiments_registry.sh): every other number of a --quick run must come out bit for
// bit the same on every run and at any thread count. Results named as timings (`step_ms`,
// `train_seconds`, `time_slope`, `attention_gflops`, `load_average`: one word of the name is a
// timing word, tests/cli/lib/same_results.py) are left out for every experiment without saying
// so. An experiment whose other numbers depend on wall time (an exponent fitted to measured
// times, a length where one method becomes faster, a model trained for a time budget) says why
// and which: `keys` are regular expressions (ECMAScript, also valid in Python), searched in each
// result name and each comparison row name. An empty reason: everything else is reproducible.
struct Nondeterminism {
  std::string reason;             // "trains each model for a wall-time budget"
  std::vector<std::string> keys;  // {"^accuracy", "beats"}: the results and rows that vary
};

struct Experiment {
  std::string name;     // kebab-case, what the user types: "worked-example"
  std::string source;   // seed document and section: "002 §39.2.1"
  std::string purpose;  // one line
  // With defaults on 2 cores: "< 1 s", "~20 s", "~3 min", filled in by the registry from the
  // last catalogue run (experiments/measured_times.h); "not measured" until the experiment has
  // been through one.
  std::string typical_time;
  Config config;  // defaults = the document's settings (a "seed" field is always added)
  // Field overrides applied by --quick (before the user's own overrides), for fast tests.
  std::vector<std::pair<std::string, std::string>> quick;
  // Runs on the reference path (autograd/mode.h: every layer built from elementary ops) unless
  // the user asks for the fast one (--fast, ATTN_REFERENCE=0): the experiments whose point is
  // the computation itself. Others run on the build's default path (fast in Release).
  bool reference = false;
  Nondeterminism nondeterministic;  // see above; empty for most experiments
  // Checks settings that involve more than one field (each field's own bounds are checked by
  // Config), before the run folder is created: a bad combination writes nothing. Throw
  // attn::UsageError. Optional.
  std::function<void(const Config&)> check;
  // Does the work. Throw attn::Error to fail the run (exit code 1).
  std::function<void(const Config&, RunContext&)> run;
};

}  // namespace attn::experiments
