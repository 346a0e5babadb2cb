// RunContext: what an experiment's run function reports through. Everything it is given goes
// to the terminal as it happens and into the run folder at the end:
//
//   runs/<name>/<YYYYmmdd-HHMMSS>/   (or --out DIR: a new or empty folder; one that holds an
//                                     earlier run is refused, see train/run/run_folder.h)
//     config.json     every field's value (plus quick/threads/command)
//     results.json    every number reported with result(), the comparisons, the figures
//     *.csv           metrics written through csv()
//     figures/*.svg   every figure
//     report.html     config, tables, figures and the document comparison in one page
//
//   void run(const Config& cfg, RunContext& ctx) {
//     ctx.section("Attention matrix");
//     ctx.matrix("A", a, tokens, tokens);             // a table + result "A"
//     ctx.result("row_sum_max_error", err);
//     ctx.figure("attention", heatmap_svg(h), "Attention before training");
//     DocumentComparison cmp;  cmp.add("A[0,:]", {0.401, 0.198, 0.401}, ours, 5e-4);
//     ctx.compare(cmp);
//     CsvWriter log = ctx.csv("metrics", {"step", "loss"});  log.row({1, 0.69});
//   }
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/tensor.h"
#include "experiments/experiment.h"
#include "experiments/report/compare.h"
#include "experiments/report/html.h"
#include "experiments/report/table.h"
#include "train/run/run_folder.h"

namespace attn::experiments {

struct RunOptions {
  std::filesystem::path out;  // empty: runs/<name>/<timestamp> under the current directory
  bool quick = false;
  bool write = true;    // false: no run folder (unit tests)
  bool echo = true;     // false: nothing printed to the terminal (unit tests)
  int threads = 0;      // as set by the CLI, recorded in config.json
  std::string command;  // the command line, recorded in config.json and the report
};

// A CSV file in the run folder, flushed after every row (a crashed run keeps its metrics). It
// is appended to as the run goes, so it is the one kind of file not replaced through
// write_file_atomically: the run folder is new (or empty) and locked, so nothing is overwritten.
class CsvWriter {
 public:
  CsvWriter() = default;
  CsvWriter(const std::filesystem::path& path, const std::vector<std::string>& header);
  void row(const std::vector<double>& values);
  bool is_open() const { return out_.is_open(); }

 private:
  std::ofstream out_;
  size_t columns_ = 0;
};

class RunContext {
 public:
  RunContext(const Experiment& experiment, const Config& config, RunOptions options);

  const Config& config() const { return config_; }
  bool quick() const { return options_.quick; }
  uint64_t seed() const { return static_cast<uint64_t>(config_.get_int("seed")); }
  // The run folder (empty when options.write is false).
  const std::filesystem::path& dir() const { return dir_; }

  // ---- what the run reports, in order ----
  void section(const std::string& title);
  void note(const std::string& text);  // a paragraph of explanation
  void table(const Table& t);
  void preformatted(const std::string& text);  // printed as is (e.g. the tape)
  // A matrix as a table (3 decimals unless told) that is also stored as result `name`.
  void matrix(const std::string& name,
              const Tensor& values,
              const std::vector<std::string>& row_labels = {},
              const std::vector<std::string>& col_labels = {},
              int precision = 3);
  // Writes figures/<stem>.svg and puts the figure in the report.
  void figure(const std::string& stem, const std::string& svg, const std::string& caption);
  // Prints the comparison and keeps it for results.json and the report. In a --quick run every
  // row is `not judged` ("--quick run"): the cut settings cannot judge a claim.
  void compare(DocumentComparison comparison);
  // A named number (or bool, string, array) for results.json. Names are unique.
  void result(const std::string& name, const nlohmann::ordered_json& value);
  void result(const std::string& name, const Tensor& value);  // nested arrays by shape
  CsvWriter csv(const std::string& stem, const std::vector<std::string>& header);

  const nlohmann::ordered_json& results() const { return results_; }
  const std::vector<DocumentComparison>& comparisons() const { return comparisons_; }
  int num_differ() const;      // judged rows that DIFFER, over every comparison
  int num_not_judged() const;  // rows this run could not judge

  // Writes results.json and report.html (with `error` shown when the run failed) and prints
  // where they are.
  void finish(double seconds, const std::string& error = "");

 private:
  void write_text(const std::filesystem::path& rel, const std::string& text) const;

  const Experiment& experiment_;
  Config config_;
  RunOptions options_;
  std::filesystem::path dir_;
  train::RunFolderLock lock_;  // held while the run writes its folder
  HtmlReport report_;
  nlohmann::ordered_json results_ = nlohmann::ordered_json::object();
  std::vector<DocumentComparison> comparisons_;
  std::vector<std::string> figures_;
};

// Nested JSON arrays of a tensor's values ((2,3) -> [[..],[..]]), a number for rank 0.
nlohmann::ordered_json tensor_json(const Tensor& t);
// v as a JSON number, or null when it is NaN or infinite (which JSON cannot hold).
nlohmann::ordered_json finite_or_null(double v);
// A fresh folder runs/<name>/<YYYYmmdd-HHMMSS>[-k] under `root` (created, not locked).
std::filesystem::path new_run_dir(const std::filesystem::path& root, const std::string& name);

}  // namespace attn::experiments
