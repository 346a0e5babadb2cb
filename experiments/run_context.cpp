#include "experiments/run_context.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "autograd/build_info.h"
#include "autograd/error.h"
#include "autograd/mode.h"
#include "autograd/safetensors.h"
#include "experiments/run_settings.h"

namespace attn::experiments {

namespace {

nlohmann::ordered_json tensor_json_at(const Tensor& t, int axis, int64_t offset) {
  if (axis == t.rank()) return static_cast<double>(t[offset]);
  int64_t stride = 1;
  for (int a = axis + 1; a < t.rank(); ++a) stride *= t.size(a);
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (int64_t i = 0; i < t.size(axis); ++i)
    arr.push_back(tensor_json_at(t, axis + 1, offset + i * stride));
  return arr;
}

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// How libgomp's idle workers wait, which moves every timing at 2 threads: the variables that set
// it (attnlab sets GOMP_SPINCOUNT itself, experiments/cli/openmp_spin.h), or libgomp's default.
std::string openmp_wait() {
  std::string text;
  for (const char* name : {"GOMP_SPINCOUNT", "OMP_WAIT_POLICY"})
    if (const char* value = std::getenv(name))
      text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, value);
  return text.empty() ? "libgomp's default" : text;
}

}  // namespace

nlohmann::ordered_json tensor_json(const Tensor& t) {
  return tensor_json_at(t, 0, 0);
}

nlohmann::ordered_json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

std::filesystem::path default_runs_folder() {
  return std::filesystem::current_path() / "runs";
}

std::filesystem::path new_run_dir_in(const std::filesystem::path& runs, const std::string& name) {
  return train::create_unique_folder(runs / name / timestamp());
}

std::filesystem::path new_run_dir(const std::filesystem::path& root, const std::string& name) {
  return new_run_dir_in(root / "runs", name);
}

std::vector<std::string> overridden_fields(const Experiment& experiment,
                                           const nlohmann::ordered_json& values,
                                           bool quick) {
  Config baseline = experiment.config;
  if (quick)
    for (const auto& [k, v] : experiment.quick) baseline.set(k, v);
  const nlohmann::ordered_json base = baseline.to_json();
  std::vector<std::string> changed;
  for (const auto& [name, value] : values.items())
    if (!base.contains(name) || base.at(name) != value) changed.push_back(name);
  for (const auto& [name, value] : base.items())
    if (!values.contains(name)) changed.push_back(name);
  return changed;
}

CsvWriter::CsvWriter(const std::filesystem::path& path, const std::vector<std::string>& header)
    : out_(path), columns_(header.size()) {
  if (!out_) throw Error("cannot write " + path.string());
  for (size_t i = 0; i < header.size(); ++i) out_ << (i ? "," : "") << header[i];
  out_ << "\n" << std::flush;
}

void CsvWriter::row(const std::vector<double>& values) {
  if (!out_.is_open()) return;  // a run without a folder (unit tests) writes nothing
  if (values.size() != columns_)
    throw Error(
        fmt::format("CsvWriter: a row of {} values for {} columns", values.size(), columns_));
  for (size_t i = 0; i < values.size(); ++i) out_ << (i ? "," : "") << fmt::format("{}", values[i]);
  out_ << "\n" << std::flush;
}

RunContext::RunContext(const Experiment& experiment, const Config& config, RunOptions options)
    : experiment_(experiment),
      config_(config),
      options_(std::move(options)),
      report_(experiment.name, experiment.source + " \u2014 " + experiment.purpose) {
  if (options_.write) {
    // The folder is locked for the whole run; an --out folder holding an earlier run is
    // refused (attn::UsageError) rather than overwritten.
    dir_ = options_.out.empty() ? new_run_dir_in(default_runs_folder(), experiment.name)
                                : options_.out;
    lock_ = train::claim_run_folder(dir_, "--out", /*continuing=*/false);
    std::filesystem::create_directories(dir_ / "figures");
    nlohmann::ordered_json cfg{{"experiment", experiment.name}, {"source", experiment.source},
                               {"config", config_.to_json()},   {"quick", options_.quick},
                               {"threads", options_.threads},   {"command", options_.command},
                               {"path", path_name()},           {"build", build_summary()},
                               {"openmp_wait", openmp_wait()}};
    cfg["overridden"] = overridden_fields(experiment, cfg["config"], options_.quick);
    write_text("config.json", cfg.dump(2) + "\n");
  }
  if (options_.echo)
    fmt::print("{} [{}] {}\n", experiment.name, experiment.source, experiment.purpose);
  Table cfg_table("Configuration", {"field", "value", "default", "meaning"});
  for (const auto& f : config_.fields())
    cfg_table.add_row({f.name, format_value(f.value), format_value(f.default_value), f.help});
  report_.heading("Configuration");
  std::string line = "Command: " + (options_.command.empty() ? "attnlab run " + experiment.name
                                                             : options_.command);
  if (options_.quick) line += "   (quick mode)";
  line += std::string("   path: ") + path_name() +
          (reference_mode() ? " (every layer from elementary ops)" : " (fused kernels)");
  report_.paragraph(line);
  report_.table(cfg_table);
}

void RunContext::write_text(const std::filesystem::path& rel, const std::string& text) const {
  if (dir_.empty()) return;
  write_file_atomically((dir_ / rel).string(), text);
}

void RunContext::section(const std::string& title) {
  if (options_.echo) fmt::print("\n== {} ==\n", title);
  report_.heading(title);
}

void RunContext::note(const std::string& text) {
  if (options_.echo) fmt::print("{}\n", text);
  report_.paragraph(text);
}

void RunContext::table(const Table& t) {
  if (options_.echo) t.print();
  report_.table(t);
}

void RunContext::preformatted(const std::string& text) {
  if (options_.echo) fmt::print("{}\n", text);
  report_.preformatted(text);
}

void RunContext::matrix(const std::string& name,
                        const Tensor& values,
                        const std::vector<std::string>& row_labels,
                        const std::vector<std::string>& col_labels,
                        int precision) {
  table(Table::matrix(name, values, row_labels, col_labels, precision));
  result(name, values);
}

void RunContext::figure(const std::string& stem,
                        const std::string& svg,
                        const std::string& caption) {
  const std::string file = "figures/" + stem + ".svg";
  write_text(file, svg);
  figures_.push_back(file);
  report_.figure(svg, caption, file);
  if (options_.echo && !dir_.empty()) fmt::print("figure: {}\n", (dir_ / file).string());
}

void RunContext::compare(DocumentComparison comparison) {
  // A --quick run cuts the settings for speed: it shows how each row came out but judges none.
  if (options_.quick) {
    comparison.not_judged("--quick run");
  } else if (const auto changed = config_.changed(); !changed.empty()) {
    std::string names;
    for (const auto& n : changed) names += (names.empty() ? "--" : ", --") + n;
    note("Note: " + names +
         " differ from the document's settings, so its numbers below "
         "describe a different computation; DIFFERS is expected.");
  }
  if (options_.echo) {
    comparison.table().print();
    fmt::print("  {}\n", agreement_summary(static_cast<int>(comparison.entries().size()),
                                           comparison.num_differ(), comparison.num_not_judged()));
  }
  report_.comparison(comparison);
  comparisons_.push_back(std::move(comparison));
}

void RunContext::result(const std::string& name, const nlohmann::ordered_json& value) {
  if (results_.contains(name)) throw Error("RunContext: result '" + name + "' reported twice");
  results_[name] = value;
}

void RunContext::result(const std::string& name, const Tensor& value) {
  result(name, tensor_json(value));
}

CsvWriter RunContext::csv(const std::string& stem, const std::vector<std::string>& header) {
  if (dir_.empty()) return CsvWriter();
  return CsvWriter(dir_ / (stem + ".csv"), header);
}

int RunContext::num_differ() const {
  int n = 0;
  for (const auto& c : comparisons_) n += c.num_differ();
  return n;
}

int RunContext::num_not_judged() const {
  int n = 0;
  for (const auto& c : comparisons_) n += c.num_not_judged();
  return n;
}

void RunContext::finish(double seconds, const std::string& error) {
  if (!error.empty()) {
    report_.heading("The run failed");
    report_.preformatted(error);
  }
  report_.paragraph(fmt::format("Wall time: {:.2f} s.", seconds));
  int entries = 0;
  for (const auto& c : comparisons_) entries += static_cast<int>(c.entries().size());
  std::string summary =
      error.empty() ? fmt::format("Finished in {:.2f} s.", seconds) : "FAILED: " + error + ".";
  if (entries > 0)
    summary += fmt::format(" Document beside ours: {}{}.",
                           agreement_summary(entries, num_differ(), num_not_judged()),
                           num_differ() ? " (reasons below)" : "");
  report_.summary(summary, error.empty() && num_differ() == 0);
  if (options_.echo) fmt::print("\n{}\n", summary);
  nlohmann::ordered_json comps = nlohmann::ordered_json::array();
  for (const auto& c : comparisons_) comps.push_back(c.to_json());
  nlohmann::ordered_json out{{"experiment", experiment_.name},
                             {"source", experiment_.source},
                             {"status", error.empty() ? "ok" : "failed"},
                             {"seconds", seconds},
                             {"results", results_},
                             {"comparisons", comps},
                             {"differ", num_differ()},
                             {"not_judged", num_not_judged()},
                             {"figures", figures_}};
  if (!error.empty()) out["error"] = error;
  write_text("results.json", out.dump(2) + "\n");
  write_text("report.html", report_.html());
  if (options_.echo && !dir_.empty()) fmt::print("\nreport: {}\n", (dir_ / "report.html").string());
}

}  // namespace attn::experiments
