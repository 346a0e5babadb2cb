// `attnlab run --all`: the catalogue one experiment after another (experiments/cli/claims.h).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <system_error>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/kernels/parallel.h"
#include "autograd/safetensors.h"
#include "experiments/cli/claims.h"
#include "experiments/cli/openmp_spin.h"
#include "experiments/measured_times.h"
#include "experiments/registry.h"
#include "experiments/report/html.h"
#include "experiments/run_context.h"
#include "experiments/run_settings.h"

namespace attn::experiments {

namespace fs = std::filesystem;

bool asks_for_all(const std::vector<std::string>& args) {
  for (const std::string& a : args)
    if (a == "--all" || a.rfind("--all=", 0) == 0) return true;
  return false;
}

namespace {

struct RunAllRequest {
  bool quick = false, help = false;
  std::vector<const Experiment*> experiments;  // the catalogue, or --only's in its order
  fs::path runs;
  std::optional<int> threads;
};

std::vector<const Experiment*> only_these(const std::string& list) {
  std::vector<const Experiment*> chosen;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    if (name.empty())
      throw UsageError("attnlab run --all: --only '" + list + "' has an empty name");
    try {
      const Experiment* e = &find_experiment(name);
      if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
    } catch (const UsageError& err) {
      throw UsageError(std::string("attnlab run --all --only: ") + err.what());
    }
    start = comma + 1;
  }
  return chosen;
}

RunAllRequest parse_run_all_args(const std::vector<std::string>& args) {
  Config flags;
  flags.add_string("only", "", "").add_string("runs", "", "").add_string("threads", "", "");
  flags.add_bool("all", false, "").add_bool("quick", false, "").add_bool("help", false, "");
  std::vector<std::string> words;
  try {
    words = read_flags(args, "attnlab run --all", flags);
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) +
                     " (--all runs every experiment with its own defaults; fields are set for "
                     "one experiment: attnlab run <experiment> --field value)");
  }
  if (!words.empty())
    throw UsageError("attnlab run --all: unexpected '" + words[0] +
                     "': give either an experiment name or --all, not both (--only a,b runs "
                     "a few)");
  const std::string only = flags.get_string("only"), runs = flags.get_string("runs");
  RunAllRequest r{flags.get_bool("quick"), flags.get_bool("help"),
                  only.empty() ? catalogue() : only_these(only),
                  runs.empty() ? default_runs_folder() : fs::path(runs)};
  if (!flags.get_string("threads").empty()) r.threads = parse_threads(flags.get_string("threads"));
  return r;
}

std::string clock_text(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

// Experiment i of N and the time left: the list's times of the experiments still to run,
// scaled by this run's pace so far (a --quick run goes much faster than the list says).
struct Progress {
  std::vector<double> typical;  // seconds per experiment (60 when the list gives no time)
  double typical_done = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::string line(size_t i, const Experiment& e) const {
    double left = 0;
    for (size_t k = i; k < typical.size(); ++k) left += typical[k];
    const double pace = typical_done > 0 ? elapsed() / typical_done : 1.0;
    return fmt::format("[{}/{}] {}  (list time {})  elapsed {}  ETA {}", i + 1, typical.size(),
                       e.name, e.typical_time, clock_text(elapsed()), clock_text(left * pace));
  }
};

struct Outcome {
  const Experiment* experiment;
  int code;
  double seconds;
  std::string run;  // relative to the runs folder; "" when no folder was left
};

std::string index_html(const RunAllRequest& r,
                       const std::vector<Outcome>& outcomes,
                       const Ledger& ledger) {
  HtmlReport page("attnlab run --all",
                  fmt::format("{} experiments{}, run folders in {}", outcomes.size(),
                              r.quick ? " (--quick)" : "", r.runs.string()));
  int failed = 0;
  std::string rows;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& o = outcomes[i];
    const LedgerEntry& entry = ledger.entries[i];
    int counts[3] = {0, 0, 0};  // ok, DIFFERS, not judged: of this run's rows only
    for (const ClaimRow& row : entry.rows)
      ++counts[row.status == "ok" ? 0 : row.status == "DIFFERS" ? 1 : 2];
    const bool this_run = !o.run.empty() && entry.run == o.run;
    auto count = [&](int k) { return this_run ? std::to_string(counts[k]) : "-"; };
    failed += o.code != 0;
    const std::string name = xml_escape(o.experiment->name);
    rows += fmt::format(
        "<tr class=\"run{}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.1f}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
        o.code ? " flag" : "",
        o.run.empty() ? name : fmt::format("<a href=\"{}/report.html\">{}</a>", o.run, name),
        xml_escape(o.experiment->source), o.code ? "FAILED" : "ok", o.seconds, count(0), count(1),
        count(2));
  }
  page.summary(fmt::format("{} of {} experiments ran, {} failed.", outcomes.size() - failed,
                           outcomes.size(), failed),
               failed == 0);
  page.raw(
      "<p><a href=\"claims.html\">The claims ledger</a> (every comparison row, by "
      "document).</p>");
  page.raw(
      "<table><thead><tr><th>experiment</th><th>source</th><th>result</th><th>seconds</th>"
      "<th>ok</th><th>DIFFERS</th><th>not judged</th></tr></thead><tbody>" +
      rows + "</tbody></table>");
  return page.html();
}

constexpr const char* kRunAllHelp =
    "attnlab run --all [--quick] [--only a,b,...] [--runs DIR] [--threads N]\n\n"
    "  Runs every experiment of `attnlab list` with its defaults, one after another, then prints\n"
    "  the claims ledger (as `attnlab claims` does) and writes <runs>/index.html linking every\n"
    "  report. A failing experiment is reported and the rest still run (exit status 1 at the "
    "end).\n\n"
    "  --quick          each experiment's --quick settings (every claim then `not judged`)\n"
    "  --only a,b       only these experiments, in this order\n"
    "  --runs DIR       where the run folders go (default: runs/ here)\n"
    "  --threads N      threads for every run\n";

}  // namespace

int run_all_command(const std::vector<std::string>& args, const std::string& command) {
  const RunAllRequest r = parse_run_all_args(args);
  if (r.help) {
    fmt::print("{}", kRunAllHelp);
    return 0;
  }
  bound_openmp_spin();  // before the first line is printed: the exec starts the command again
  Progress progress;
  for (const Experiment* e : r.experiments)
    progress.typical.push_back(measured_seconds(e->name).value_or(60.0));  // unmeasured: 1 min
  std::vector<Outcome> outcomes;
  for (size_t i = 0; i < r.experiments.size(); ++i) {
    const Experiment& e = *r.experiments[i];
    fmt::print("\n{}\n", progress.line(i, e));
    std::fflush(stdout);
    const double before = progress.elapsed();
    int code = 1;
    fs::path out;
    try {
      out = new_run_dir_in(r.runs, e.name);
    } catch (const std::exception& err) {  // e.g. <runs>/<name> is a file: this one fails
      fmt::print(stderr, "attnlab run --all: {}: {}\n", e.name, err.what());
    }
    if (!out.empty()) {
      RunRequest run;
      run.name = e.name;
      run.quick = r.quick;
      run.threads = r.threads;
      run.out = out.string();
      code = run_in_turn(run, fmt::format("attnlab run {}{} (by: {})", e.name,
                                          r.quick ? " --quick" : "", command));
    }
    std::error_code ec;
    const bool kept = !out.empty() && !fs::remove(out, ec);  // a folder left empty goes
    outcomes.push_back({&e, code, progress.elapsed() - before,
                        kept ? (fs::path(e.name) / out.filename()).string() : ""});
    progress.typical_done += progress.typical[i];
    fmt::print("[{}/{}] {}: {} in {:.1f} s\n", i + 1, r.experiments.size(), e.name,
               code ? "FAILED" : "ok", outcomes.back().seconds);
  }
  const Ledger ledger = gather_ledger(r.runs, r.quick, r.experiments);
  publish_ledger(ledger);
  const fs::path index = r.runs / "index.html";
  write_file_atomically(index.string(), index_html(r, outcomes, ledger));
  int failed = 0;
  std::string names;
  for (const Outcome& o : outcomes)
    if (o.code) names += (failed++ ? ", " : "") + o.experiment->name;
  fmt::print("index:  {}\nattnlab run --all: {} of {} experiments ran in {}{}\n", index.string(),
             outcomes.size() - failed, outcomes.size(), clock_text(progress.elapsed()),
             failed ? "; FAILED: " + names : "");
  return failed ? 1 : 0;
}

}  // namespace attn::experiments
