// The `attnlab` commands, as functions (the CLI's main only dispatches to them; tests call
// them directly).
//
//   attnlab list                                   -> list_experiments()
//   attnlab run <name> [--field value ...] [--out DIR] [--seed S] [--threads N] [--quick]
//                      [--reference | --fast] [--detect-anomaly] [--tape-dot FILE]
//                                                  -> parse_run_args() + run_experiment()
//   attnlab run <name> --help                      -> the fields, their defaults and meaning
//   attnlab demo [same options]                    -> run_experiment("demo", ...)
//   attnlab run --all ..., attnlab claims ...      -> experiments/cli/claims.h
//
// Exit codes: 0 ok, 1 the run failed, 2 bad usage (attn::UsageError).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "experiments/run_context.h"

namespace attn::experiments {

struct RunRequest {
  std::string name;
  std::vector<std::pair<std::string, std::string>> overrides;  // field -> text, in order
  std::string out;
  std::string tape_dot;  // --tape-dot FILE: the first recorded graph as Graphviz dot
  std::optional<int> threads;
  bool quick = false;
  bool help = false;
  // --reference / --fast: which path the layers take (autograd/mode.h); unset = the default.
  std::optional<bool> reference;
  bool detect_anomaly = false;  // --detect-anomaly: attn::set_detect_anomaly(true) for the run
};

// Parses the words after `attnlab run` (the experiment name first). Bad syntax: UsageError.
// With name_required = false (attnlab train: the task has a default) the name may be absent.
RunRequest parse_run_args(const std::vector<std::string>& args, bool name_required = true);

// The words of a command with a fixed set of flags (`attnlab claims`, `attnlab run --all`) read
// into `flags`: --name value and --name=value, a bool field as a switch (--name, no value), -h as
// --help. Returns the words that are no flag; a bad word is a UsageError naming `command`.
std::vector<std::string> read_flags(const std::vector<std::string>& args,
                                    const std::string& command,
                                    Config& flags);

// The experiment's defaults, then its --quick overrides (if asked), then the user's.
// Unknown fields or bad values: UsageError mentioning the experiment and the closest names.
Config resolve_config(const Experiment& experiment, const RunRequest& request);

// What `attnlab run <name> --help` prints.
std::string run_help(const Experiment& experiment, const Config& config);

// Sets the layers' path: --reference or --fast when given; else ATTN_REFERENCE when set; else
// the reference path when the experiment asks for it (Experiment::reference); else the build's.
void apply_path(std::optional<bool> requested, bool experiment_default = false);

// Runs one experiment end to end; returns the process exit code (0 ok, 1 failed). Throws
// UsageError for bad input (before any work starts). `command` is recorded in the run folder.
int run_experiment(const RunRequest& request, const std::string& command);

// `attnlab train [<task>] [--key value ...] [--threads N]`: the data-train helper's trainer
// (train/run/run_train.h). --help lists its options. Returns the exit code.
int train_command(const std::vector<std::string>& args);

// `attnlab parity <layer> --config k=v ... --weights W --inputs I --out O`: nn's layer parity
// run (nn/parity/run_layer_parity.h). "k=v" texts without '=' are a UsageError.
int parity_command(const std::string& layer,
                   const std::vector<std::string>& config,
                   const std::string& weights,
                   const std::string& inputs,
                   const std::string& out);

// The table printed by `attnlab list`.
std::string list_text();
// `attnlab list --json`: the same for scripts, one object per experiment, with what the
// determinism test needs (Experiment::nondeterministic):
//   [{"name": "memory-wall", "source": "...", "typical_time": "...", "purpose": "...",
//     "reference": false, "nondeterministic": {"reason": "...", "keys": ["growth_exponent"]}}]
std::string list_json();

// Applies ATTN_THREADS, then --threads if given (the flag wins).
void apply_threads(std::optional<int> threads);

}  // namespace attn::experiments
