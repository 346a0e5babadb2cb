// The `attnlab` commands, as functions (the CLI's main only dispatches to them; tests call
// them directly).
//
//   attnlab list                                   -> list_experiments()
//   attnlab run <name> [--field value ...] [--out DIR] [--seed S] [--threads N] [--quick]
//                                                  -> parse_run_args() + run_experiment()
//   attnlab run <name> --help                      -> the fields, their defaults and meaning
//   attnlab demo [same options]                    -> run_experiment("demo", ...)
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
  std::optional<int> threads;
  bool quick = false;
  bool help = false;
};

// Parses the words after `attnlab run` (the experiment name first). Bad syntax: UsageError.
RunRequest parse_run_args(const std::vector<std::string>& args);

// The experiment's defaults, then its --quick overrides (if asked), then the user's.
// Unknown fields or bad values: UsageError mentioning the experiment and the closest names.
Config resolve_config(const Experiment& experiment, const RunRequest& request);

// What `attnlab run <name> --help` prints.
std::string run_help(const Experiment& experiment, const Config& config);

// Runs one experiment end to end; returns the process exit code (0 ok, 1 failed). Throws
// UsageError for bad input (before any work starts). `command` is recorded in the run folder.
int run_experiment(const RunRequest& request, const std::string& command);

// The table printed by `attnlab list`.
std::string list_text();

// Applies ATTN_THREADS, then --threads if given (the flag wins).
void apply_threads(std::optional<int> threads);

}  // namespace attn::experiments
