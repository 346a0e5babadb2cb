#include "experiments/cli/claims.h"

#include <algorithm>
#include <exception>
#include <map>
#include <system_error>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/kernels/parallel.h"
#include "autograd/mode.h"
#include "autograd/tape.h"
#include "experiments/cli/openmp_spin.h"
#include "experiments/registry.h"
#include "experiments/run_context.h"
#include "experiments/run_settings.h"

namespace attn::experiments {

namespace fs = std::filesystem;

const char* run_state_name(RunState s) {
  static const char* const names[] = {"ok", "run failed", "unreadable", "no run"};  // enum order
  return names[static_cast<int>(s)];
}

std::vector<const Experiment*> catalogue() {
  std::vector<const Experiment*> list;
  for (const Experiment& e : all_experiments()) list.push_back(&e);
  return list;
}

namespace {

// Run folders are named by their start time, YYYYmmdd-HHMMSS, with "-2", "-3" ... when two
// started in the same second (train::create_unique_folder): newest first, "-10" after "-9".
std::vector<fs::path> run_folders_newest_first(const fs::path& experiment_dir) {
  std::vector<std::pair<std::pair<std::string, long>, fs::path>> found;
  std::error_code ec;
  for (fs::directory_iterator it(experiment_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    const std::string name = it->path().filename().string();
    const size_t dash = name.size() > 15 ? name.find('-', 9) : std::string::npos;
    long copy = 1;
    if (dash != std::string::npos && dash + 1 < name.size() && name.size() - dash <= 6 &&
        std::all_of(name.begin() + static_cast<long>(dash) + 1, name.end(),
                    [](char c) { return c >= '0' && c <= '9'; }))
      copy = std::stol(name.substr(dash + 1));
    found.push_back({{name.substr(0, dash), copy}, it->path()});
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a > b; });
  std::vector<fs::path> dirs;
  for (auto& f : found) dirs.push_back(std::move(f.second));
  return dirs;
}

bool default_settings(const Experiment& e, const RunSettings& s) {
  if (s.overridden) return s.overridden->empty();
  try {  // a config.json from before "overridden" was recorded: compare with today's defaults
    return overridden_fields(e, s.values, s.quick).empty();
  } catch (const std::exception&) {
    return false;
  }
}

// The chosen run's rows, or why there are none.
void read_chosen(LedgerEntry& entry, const fs::path& dir, bool quick) {
  const RunFiles files = read_run_folder(dir);
  std::string problem = files.results_problem;
  if (files.results && files.results->experiment != entry.experiment)
    problem =
        fmt::format("{}: names the experiment '{}', not '{}'", (dir / "results.json").string(),
                    files.results->experiment, entry.experiment);
  if (!problem.empty()) {
    entry.state = RunState::kUnreadable;
    entry.problem = problem;
    entry.notes.push_back("older runs are not used in its place: repair or remove " + dir.string() +
                          ", or run the experiment again");
    return;
  }
  entry.state = files.results->status == "ok" ? RunState::kOk : RunState::kFailed;
  entry.problem = files.results->error;
  entry.rows = files.results->rows;
  // A --quick run judges no claim: its rows say so whatever the file holds.
  if (quick)
    for (ClaimRow& row : entry.rows)
      if (row.status != "not judged") {
        row.status = "not judged";
        row.reason = "--quick run";
      }
}

LedgerEntry gather_entry(const fs::path& runs, const Experiment& e, bool quick) {
  LedgerEntry entry;
  entry.experiment = e.name;
  entry.source = e.source;
  int other_settings = 0;
  for (const fs::path& dir : run_folders_newest_first(runs / e.name)) {
    const RunFiles files = read_run_folder(dir, /*with_results=*/false);
    if (!files.settings) {
      entry.notes.push_back("passed over " + files.config_problem);
      continue;
    }
    if (files.settings->quick != quick || !default_settings(e, *files.settings)) {
      ++other_settings;
      continue;
    }
    entry.run = (fs::path(e.name) / dir.filename()).string();
    read_chosen(entry, dir, quick);
    break;
  }
  if (other_settings > 0)
    entry.notes.push_back(fmt::format("{} newer or unmatched run{} with other settings{} not used",
                                      other_settings, other_settings == 1 ? "" : "s",
                                      quick ? " (or not --quick)" : " (or --quick)"));
  return entry;
}

}  // namespace

Ledger gather_ledger(const fs::path& runs,
                     bool quick,
                     const std::vector<const Experiment*>& experiments) {
  Ledger ledger;
  ledger.runs = runs;
  ledger.quick = quick;
  for (const Experiment* e : experiments) ledger.entries.push_back(gather_entry(runs, *e, quick));
  return ledger;
}

std::vector<DocumentCounts> document_counts(const Ledger& ledger) {
  std::map<std::string, DocumentCounts> by_document;
  for (const LedgerEntry& entry : ledger.entries)
    for (const ClaimRow& row : entry.rows) {
      DocumentCounts& c = by_document[row.document];
      c.document = row.document;
      ++c.claims;
      if (row.status == "ok") ++c.ok;
      if (row.status == "DIFFERS") ++c.differ;
      if (row.status == "not judged") ++c.not_judged;
    }
  std::vector<DocumentCounts> out;
  for (auto& [_, c] : by_document) out.push_back(c);
  return out;
}

int num_unreadable(const Ledger& ledger) {
  return static_cast<int>(
      std::count_if(ledger.entries.begin(), ledger.entries.end(),
                    [](const auto& e) { return e.state == RunState::kUnreadable; }));
}

int run_in_turn(const RunRequest& request, const std::string& command) {
  const bool reference = reference_mode();
  int code = 1;
  try {
    code = run_experiment(request, command);
  } catch (const std::exception& e) {
    fmt::print(stderr, "attnlab run {}: failed: {}\n", request.name, e.what());
  }
  std::fflush(stdout);
  set_reference_mode(reference);
  set_detect_anomaly(false);
  tape().clear();
  return code;
}

namespace {

struct ClaimsRequest {
  fs::path runs;
  bool run_missing = false, quick = false, help = false;
  std::optional<int> threads;
};

ClaimsRequest parse_claims_args(const std::vector<std::string>& args) {
  Config flags;
  flags.add_string("runs", "", "").add_string("threads", "", "").add_bool("run_missing", false, "");
  flags.add_bool("quick", false, "").add_bool("help", false, "");
  const std::vector<std::string> words = read_flags(args, "attnlab claims", flags);
  if (!words.empty())
    throw UsageError("attnlab claims: unexpected argument '" + words[0] +
                     "' (the ledger covers every experiment; see attnlab claims --help)");
  const std::string runs = flags.get_string("runs"), threads = flags.get_string("threads");
  ClaimsRequest r{runs.empty() ? default_runs_folder() : fs::path(runs),
                  flags.get_bool("run_missing"), flags.get_bool("quick"), flags.get_bool("help")};
  if (!threads.empty()) r.threads = parse_threads(threads);
  return r;
}

constexpr const char* kClaimsHelp =
    "attnlab claims [--runs DIR] [--run-missing] [--quick] [--threads N]\n\n"
    "  Every comparison row of the catalogue (the document's number beside ours: ok, DIFFERS or\n"
    "  not judged), from the latest default-setting run of each experiment, as a table,\n"
    "  <runs>/claims.json and <runs>/claims.html (grouped by document, with links to the runs'\n"
    "  reports). A run folder whose results.json cannot be read is reported as unreadable; no\n"
    "  older run is used in its place. Exit status 1 when a chosen run is unreadable.\n\n"
    "  --runs DIR       the runs folder (default: runs/ here, where `attnlab run` writes)\n"
    "  --run-missing    first run, with its defaults, each experiment that has no such run\n"
    "  --quick          use (and with --run-missing make) --quick runs: every row not judged\n"
    "  --threads N      threads for the runs --run-missing starts\n";

}  // namespace

int claims_command(const std::vector<std::string>& args, const std::string& command) {
  const ClaimsRequest r = parse_claims_args(args);
  if (r.help) {
    fmt::print("{}", kClaimsHelp);
    return 0;
  }
  std::error_code ec;
  if (!r.run_missing && !fs::is_directory(r.runs, ec))
    throw UsageError(fmt::format(
        "attnlab claims: no runs folder '{}' (run experiments first: attnlab run --all, or "
        "attnlab claims --run-missing; --runs DIR names another folder)",
        r.runs.string()));
  if (r.run_missing) bound_openmp_spin();  // before anything is printed (the exec restarts)
  Ledger ledger = gather_ledger(r.runs, r.quick, catalogue());
  int failed = 0;
  if (r.run_missing) {
    for (const LedgerEntry& entry : ledger.entries) {
      if (entry.state != RunState::kNoRun) continue;
      RunRequest run;
      run.name = entry.experiment;
      run.quick = r.quick;
      run.threads = r.threads;
      run.out = new_run_dir_in(r.runs, entry.experiment).string();
      fmt::print("\nattnlab claims --run-missing: {} has no {}run; running it\n", run.name,
                 r.quick ? "--quick " : "default-setting ");
      failed += run_in_turn(run, command) != 0;
    }
    ledger = gather_ledger(r.runs, r.quick, catalogue());
  }
  publish_ledger(ledger);
  return failed > 0 || num_unreadable(ledger) > 0 ? 1 : 0;
}

}  // namespace attn::experiments
