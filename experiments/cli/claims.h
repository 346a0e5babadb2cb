// The claims ledger: every comparison row of the catalogue -- the document's number beside
// ours, ok / DIFFERS / not judged -- gathered from the run folders in one table, and the
// command that runs the whole catalogue.
//
//   attnlab claims                     the latest default-setting run of each experiment in runs/
//   attnlab claims --runs DIR          another runs folder
//   attnlab claims --run-missing       first runs (with its defaults) each experiment without one
//   attnlab claims --quick             the latest --quick runs instead (every row not judged)
//   attnlab run --all [--quick] [--only a,b] [--runs DIR] [--threads N]
//                                      the catalogue one experiment after another, then the
//                                      ledger and <runs>/index.html linking every report
//
// A default-setting run is one whose config.json lists no overridden field (experiments/
// run_context.h: a different --seed counts) and whose "quick" matches the ledger's mode. The
// ledger prints a table and writes <runs>/claims.json and a self-contained <runs>/claims.html,
// rows grouped by document (a comparison citing several documents is filed under the first one
// its title -- else its experiment's source -- names). An experiment without such a run is
// listed as "no run"; one whose chosen run cannot be read is listed as "unreadable" with the
// file and the reason, and no older run is used in its place (the ledger says so).
//
// In code:
//   Ledger ledger = gather_ledger("runs", /*quick=*/false, catalogue());
//   fmt::print("{}", ledger_text(ledger));
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/claims_reader.h"
#include "experiments/cli/commands.h"
#include "experiments/experiment.h"

namespace attn::experiments {

enum class RunState { kOk, kFailed, kUnreadable, kNoRun };
// "ok", "run failed", "unreadable", "no run".
const char* run_state_name(RunState s);

// One experiment's place in the ledger.
struct LedgerEntry {
  std::string experiment, source;
  RunState state = RunState::kNoRun;
  std::string run;                 // the run folder, relative to the runs folder
  std::string problem;             // unreadable: the file and why; run failed: the error
  std::vector<std::string> notes;  // run folders passed over, and why
  std::vector<ClaimRow> rows;
};

struct Ledger {
  std::filesystem::path runs;
  bool quick = false;
  std::vector<LedgerEntry> entries;  // in catalogue order
};

struct DocumentCounts {
  std::string document;
  int claims = 0, ok = 0, differ = 0, not_judged = 0;
};

// Every registered experiment, in `attnlab list` order.
std::vector<const Experiment*> catalogue();
// Reads the runs folder (which need not exist). Never throws for what the files hold.
Ledger gather_ledger(const std::filesystem::path& runs,
                     bool quick,
                     const std::vector<const Experiment*>& experiments);
// Per document, in document order.
std::vector<DocumentCounts> document_counts(const Ledger& ledger);
// Entries whose run could not be read.
int num_unreadable(const Ledger& ledger);

std::string ledger_text(const Ledger& ledger);  // the terminal tables
nlohmann::ordered_json ledger_json(const Ledger& ledger);
std::string ledger_html(const Ledger& ledger);
// Writes <runs>/claims.json and <runs>/claims.html, prints the tables and where they went.
void publish_ledger(const Ledger& ledger);

// Runs one experiment as `attnlab run` does (run_experiment), in this process, and returns its
// exit code: a failure of any kind (UsageError included) is printed and gives 1, and the
// process-wide settings a run changes (the layers' path, anomaly detection, the tape) are put
// back, so the next experiment starts as a fresh `attnlab run` would.
int run_in_turn(const RunRequest& request, const std::string& command);

// `attnlab claims [--runs DIR] [--run-missing] [--quick] [--threads N]`. Exit 0, or 1 when a
// chosen run could not be read or a --run-missing run failed; UsageError for bad input.
int claims_command(const std::vector<std::string>& args, const std::string& command);

// True when the words after `attnlab run` ask for --all.
bool asks_for_all(const std::vector<std::string>& args);
// `attnlab run --all ...`: exit 0, or 1 when an experiment failed; UsageError for bad input.
int run_all_command(const std::vector<std::string>& args, const std::string& command);

}  // namespace attn::experiments
