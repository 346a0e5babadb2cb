// The claims ledger's reader of one run folder: config.json says how the run was started,
// results.json holds its comparison rows (written by RunContext::finish, experiments/
// run_context.h). The files may be anything a disk can hold -- a run killed while writing, a
// student's edit, a file from another version, hostile bytes -- so nothing here throws and
// nothing trusts the file: every problem comes back as a sentence naming the file and the field.
//
//   attn::experiments::RunFiles run =
//   attn::experiments::read_run_folder("runs/anagrams/20261128-101500"); if
//   (!run.config_problem.empty()) ...   // config.json unreadable: settings unknown if
//   (!run.results_problem.empty()) ...  // "runs/.../results.json: truncated or not JSON ..." for
//   (const ClaimRow& row : run.rows) fmt::print("{} {}\n", row.claim, row.status);
//
// It needs only the standard library, fmt and nlohmann::json (no registry, no tensors), so the
// fuzz harness tests/fuzz/fuzz_claims.cpp builds it alone.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::experiments {

// One comparison row as the ledger shows it (texts, ready to print).
struct ClaimRow {
  std::string document;  // "002": the first document the comparison's title (else the
                         // experiment's source) names; "(none)" when it names none
  std::string section;  // "002 §39.2": the title's reference before ':' or " vs ", else the source
  std::string table;    // the comparison's title
  std::string claim;    // the row's name
  std::string document_value, ours;
  std::string status;  // "ok", "DIFFERS" or "not judged"
  std::string reason;  // why it DIFFERS, or why it is not judged
};

// What config.json says about how a run was started.
struct RunSettings {
  bool quick = false;
  // The fields set away from the run's baseline (RunContext records them as "overridden");
  // absent in config.json files written before that record existed.
  std::optional<std::vector<std::string>> overridden;
  nlohmann::ordered_json values = nlohmann::ordered_json::object();  // "config": every field
};

// What results.json says.
struct RunResults {
  std::string experiment, source;
  std::string status;  // "ok" or "failed"
  std::string error;   // the failure, when failed
  std::vector<ClaimRow> rows;
};

// A results.json or config.json larger than this is refused unread (a real one is well under
// a megabyte; a huge file is damage, and reading it whole would take the memory).
inline constexpr std::size_t kMaxRunFileBytes = 64u << 20;

// Parses config.json text. Returns the problem ("not JSON ...", "\"quick\" is not true/false")
// in `problem` and nullopt when the text is not a config.json.
std::optional<RunSettings> parse_run_settings(std::string_view text, std::string& problem);
// Parses results.json text, every comparison row checked for its types and its status word.
std::optional<RunResults> parse_run_results(std::string_view text, std::string& problem);

// One run folder, read.
struct RunFiles {
  std::filesystem::path dir;
  std::optional<RunSettings> settings;
  std::string config_problem;  // "runs/x/y/config.json: ..." when settings is empty
  std::optional<RunResults> results;
  std::string results_problem;  // "runs/x/y/results.json: ..." when results is empty
};

// Reads <dir>/config.json, and <dir>/results.json when `with_results`. Never throws.
RunFiles read_run_folder(const std::filesystem::path& dir, bool with_results = true);

// Reads a whole file of at most kMaxRunFileBytes; the problem ("missing", "is 80 MB, over the
// 64 MB limit", "cannot be read") in `problem` otherwise.
std::optional<std::string> read_small_file(const std::filesystem::path& file, std::string& problem);

// The first `n` bytes of s, without half a UTF-8 character at the cut.
std::string cut_utf8(const std::string& s, size_t n);

}  // namespace attn::experiments
