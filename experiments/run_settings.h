// Where `attnlab run` puts its run folders, and what config.json records about the settings a
// run was started with (for the claims ledger, experiments/cli/claims.h).
//
//   fs::path runs = attn::experiments::default_runs_folder();           // ./runs
//   fs::path dir = attn::experiments::new_run_dir_in(runs, "anagrams");  // runs/anagrams/<time>
//   auto changed = attn::experiments::overridden_fields(e, cfg.to_json(), /*quick=*/false);
//
// RunContext writes `"overridden": [...]` into every config.json: the fields set away from the
// experiment's defaults (in a --quick run, from its --quick settings), the seed included. A
// run with none used the document's settings.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/experiment.h"

namespace attn::experiments {

// runs/ under the current directory.
std::filesystem::path default_runs_folder();
// A fresh folder <runs>/<name>/<YYYYmmdd-HHMMSS>[-k] (created, not locked).
std::filesystem::path new_run_dir_in(const std::filesystem::path& runs, const std::string& name);
// The fields of `values` (a Config's to_json()) that differ from the experiment's defaults --
// with its --quick overrides applied when `quick` -- or that the defaults lack, or that
// `values` lacks. Empty: the run used the document's settings.
std::vector<std::string> overridden_fields(const Experiment& experiment,
                                           const nlohmann::ordered_json& values,
                                           bool quick);

}  // namespace attn::experiments
