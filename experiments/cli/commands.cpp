#include "experiments/cli/commands.h"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "autograd/error.h"
#include "autograd/kernels/parallel.h"
#include "autograd/mode.h"
#include "autograd/tape.h"
#include "experiments/cli/openmp_spin.h"
#include "experiments/common/tape_figure.h"
#include "experiments/measured_times.h"
#include "experiments/registry.h"
#include "nn/parity/run_layer_parity.h"
#include "train/distributed/communicator.h"
#include "train/distributed/data_parallel.h"
#include "train/options/suggest.h"
#include "train/run/run_train.h"
#include "train/run/train_config.h"

namespace attn::experiments {

namespace {

bool is_flag(const std::string& s) {
  return s.size() > 2 && s.rfind("--", 0) == 0;
}

// Before any work: `path` can become a file. A folder there, or a missing parent folder, is a
// usage mistake (exit 2); a parent folder we may not write into is a runtime failure (exit 1).
void check_output_file(const std::string& flag, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(
        fmt::format("{} '{}' is a folder; give the path of the file to write", flag, path));
  const fs::path parent = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : ".";
  if (!fs::is_directory(parent, ec))
    throw UsageError(
        fmt::format("{} '{}': the folder '{}' does not exist", flag, path, parent.string()));
  if (::access(parent.c_str(), W_OK) != 0)
    throw Error(fmt::format("{} '{}': cannot write into the folder '{}': {}", flag, path,
                            parent.string(), std::strerror(errno)));
}

}  // namespace

// Above 64 threads OpenBLAS (built with MAX_CPU_NUMBER 64) silently runs 64 while our own
// kernels run the number asked for, and the run would record a thread count BLAS never used;
// a count of 1000 is a typo anyway. Up to 64 is accepted even on a smaller machine (the
// threads then take turns on the cores): a checkpoint continues bit-identically only with
// the thread count that wrote it, so a student must be able to ask for that count.
RunRequest parse_run_args(const std::vector<std::string>& args, bool name_required) {
  RunRequest r;
  size_t i = 0;
  auto take_value = [&](const std::string& flag, std::optional<std::string> inline_value) {
    if (inline_value) return *inline_value;
    if (i + 1 >= args.size() || is_flag(args[i + 1]))
      throw UsageError(flag + " needs a value (e.g. " + flag + " 4)");
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      r.help = true;
      continue;
    }
    if (!is_flag(a)) {
      if (r.name.empty() && !a.empty() && a[0] != '-') {
        r.name = a;
        continue;
      }
      throw UsageError("unexpected argument '" + a +
                       "': fields are given as --name value (see attnlab run <experiment> --help)");
    }
    std::string key = a.substr(2);
    std::optional<std::string> value;
    if (const size_t eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    }
    if (key == "quick") {
      r.quick = value ? (*value != "false" && *value != "0") : true;
    } else if (key == "detect-anomaly" || key == "detect_anomaly") {
      r.detect_anomaly = value ? (*value != "false" && *value != "0") : true;
    } else if (key == "out") {
      r.out = take_value("--out", value);
    } else if (key == "tape-dot" || key == "tape_dot") {
      r.tape_dot = take_value("--tape-dot", value);
    } else if (key == "threads") {
      r.threads = parse_threads(take_value("--threads", value));
    } else if (key == "reference" || key == "fast") {
      if (value) throw UsageError("--" + key + " takes no value");
      const bool reference = key == "reference";
      if (r.reference && *r.reference != reference)
        throw UsageError("--reference and --fast contradict each other: give one");
      r.reference = reference;
    } else {
      // A field. A flag followed by another flag (or nothing) is a bare boolean: "true".
      if (!value && (i + 1 >= args.size() || is_flag(args[i + 1]))) value = "true";
      r.overrides.emplace_back(key, take_value("--" + key, value));
    }
  }
  if (r.name.empty() && !r.help && name_required)
    throw UsageError("attnlab run: which experiment? (`attnlab list` shows them)");
  return r;
}

std::vector<std::string> read_flags(const std::vector<std::string>& args,
                                    const std::string& command,
                                    Config& flags) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] != "-h" && !is_flag(args[i])) {
      positional.push_back(args[i]);
      continue;
    }
    std::string name = args[i] == "-h" ? "help" : args[i].substr(2);
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); eq != std::string::npos)
      value = name.substr(eq + 1), name.resize(eq);
    const std::string key = train::options::canonical_field_name(name);
    const auto& fields = flags.fields();
    const auto field =
        std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return f.name == key; });
    if (field == fields.end()) {
      std::vector<std::string> flag_names = flags.names();  // as spelled on the command line
      for (std::string& n : flag_names) std::replace(n.begin(), n.end(), '_', '-');
      throw UsageError(command + ": unknown option --" + name + "." +
                       train::options::did_you_mean(name, flag_names, "--"));
    }
    const bool is_switch = field->type == FieldType::kBool;
    if (is_switch && value) throw UsageError(command + ": --" + name + " takes no value");
    if (!is_switch && !value && i + 1 < args.size() && !is_flag(args[i + 1])) value = args[++i];
    if (!is_switch && (!value || value->empty()))
      throw UsageError(command + ": --" + name + " needs a value");
    flags.set(key, is_switch ? "true" : *value);
  }
  return positional;
}

Config resolve_config(const Experiment& e, const RunRequest& request) {
  Config cfg = e.config;
  try {
    if (request.quick)
      for (const auto& [k, v] : e.quick) cfg.set(k, v);
    for (const auto& [k, v] : request.overrides) cfg.set(k, v);
  } catch (const UsageError& err) {
    throw UsageError("run " + e.name + ": " + err.what());
  }
  return cfg;
}

namespace {

// The options of both commands that are no field of the experiment or the training run: which
// threads, which path, the anomaly check and the graph. `attnlab run` adds --out and --quick.
std::string run_options_help(bool reference_default) {
  return fmt::format(
      "Run options:\n"
      "  --threads N        threads for BLAS and our kernels, 0..64 (0 or unset: ATTN_THREADS "
      "or all cores)\n"
      "  --reference        every layer built from elementary ops (matmul, softmax, ...){}\n"
      "  --fast             the fused kernels{}\n"
      "  --detect-anomaly   check every op's output (forward and backward) for NaN/Inf and stop "
      "at the\n"
      "                     first op that produces one, naming it (slower; see the README)\n"
      "  --tape-dot FILE    write the first recorded graph to FILE as Graphviz dot (and "
      "FILE.svg)\n",
      reference_default ? " (default here)" : "", reference_default ? "" : " (default in Release)");
}

}  // namespace

std::string run_help(const Experiment& e, const Config& cfg) {
  std::string s = fmt::format(
      "attnlab run {} [--field value ...] [run options]\n\n  {}\n  source: {}   typical time: "
      "{}\n\n",
      e.name, e.purpose, e.source, e.typical_time);
  s += cfg.help_text(
      "Fields (defaults are the document's settings; '-' and '_' are interchangeable)");
  s += '\n';
  s += run_options_help(e.reference);
  s += fmt::format(
      "  --out DIR          write the run folder here (default runs/{}/<time>/); it must be\n"
      "                     new or empty: a folder holding an earlier run is refused\n",
      e.name);
  s += "  --quick            a fast, smaller run (for tests)";
  if (!e.quick.empty()) {
    s += ":";
    for (const auto& [k, v] : e.quick) s += " --" + k + " " + v;
  }
  return s + "\n";
}

void apply_path(std::optional<bool> requested, bool experiment_default) {
  if (requested)
    set_reference_mode(*requested);
  else if (experiment_default && !reference_mode_from_env())
    set_reference_mode(true);
}

void apply_threads(std::optional<int> threads) {
  init_threads_from_env();
  if (threads) set_num_threads(*threads);
}

int run_experiment(const RunRequest& request, const std::string& command) {
  const Experiment& e = find_experiment(request.name);
  const Config cfg = resolve_config(e, request);
  if (request.help) {
    fmt::print("{}", run_help(e, cfg));
    return 0;
  }
  if (e.check) {
    try {
      e.check(cfg);
    } catch (const UsageError& err) {
      throw UsageError("run " + e.name + ": " + err.what());
    }
  }
  bound_openmp_spin();  // the options are good: from here on it computes
  apply_threads(request.threads);
  apply_path(request.reference, e.reference);
  set_detect_anomaly(request.detect_anomaly);
  // Under mpirun every rank runs the experiment, and its training (train_task) is data-parallel
  // across them; rank 0 alone prints and writes the run folder.
  const train::distributed::Communicator& comm = train::distributed::world();
  RunOptions options;
  if (comm.rank() != 0) {
    options.write = false;
    std::fflush(stdout);
    if (!std::freopen("/dev/null", "w", stdout))
      throw Error("attnlab run: cannot silence the output of a rank > 0 (/dev/null)");
  }
  options.out = request.out;
  options.quick = request.quick;
  options.threads = num_threads();
  options.command = command;
  TapeDotOutput tape_dot(request.tape_dot);
  RunContext ctx(e, cfg, options);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  try {
    e.run(ctx.config(), ctx);
    tape_dot.finish(&ctx);
  } catch (const UsageError& err) {
    ctx.finish(elapsed(), err.what());
    throw;
  } catch (const std::exception& err) {
    ctx.finish(elapsed(), err.what());
    if (comm.size() > 1) throw;  // run_as_rank ends the other ranks, which may be waiting
    fmt::print(stderr, "attnlab run {}: failed: {}\n", e.name, err.what());
    return 1;
  }
  ctx.finish(elapsed());
  fmt::print("{}: done in {:.2f} s\n", e.name, elapsed());
  return 0;
}

namespace {

int train_on_this_rank(const std::vector<std::string>& args) {
  RunRequest r;
  train::TrainConfig cfg;
  // Under mpirun every rank reads the same command line: a mistake in it is reported by every
  // rank together (exit 2), not by the first rank to see it ending the job.
  train::distributed::all_or_none(train::distributed::world(), "reading the options", [&] {
    r = parse_run_args(args, false);
    if (r.quick) throw UsageError("attnlab train: --quick belongs to `attnlab run`; use --steps N");
    if (!r.name.empty()) train::set_train_option(cfg, "task", r.name);
    if (!r.out.empty()) train::set_train_option(cfg, "out", r.out);
    for (const auto& [k, v] : r.overrides) train::set_train_option(cfg, k, v);
    if (r.help) return;
    train::validate_train_config(cfg);  // every mistake reported before threads or files change
  });
  if (r.help) {
    if (train::distributed::world().rank() != 0) return 0;
    fmt::print(
        "attnlab train [<task>] [--field value ...] [run options]\n\n"
        "  Trains a model on a task; the run folder gets the metrics, samples and checkpoints.\n"
        "  Fields ('-' and '_' are interchangeable) are grouped as in `attnlab run`.\n\n{}\n{}",
        train::train_options_help(cfg), run_options_help(false));
    fmt::print(
        "\nRun folders: --out must be new or empty. A folder that already holds a run "
        "(config.json, metrics,\ncheckpoint) is refused: continue it with --resume "
        "<out>/checkpoint.safetensors, or choose another\n--out. A folder in use by another "
        "attnlab process is refused too (its pid is named).\n"
        "A diverging run (NaN/Inf loss, or a loss 1000x its first) stops with exit status 1.\n"
        "\nData-parallel: `mpirun -np N attnlab train ...` (or srun) splits every global batch "
        "across N ranks\n(the same examples in the same order as one process; the gradients agree "
        "to float rounding);\nrank 0 writes the run folder. ATTN_DIST_TIMEOUT (default 120) is "
        "how many seconds a rank\nwaits for the others; ATTN_DIST_INIT_TIMEOUT (default: "
        "ATTN_DIST_TIMEOUT) is how many seconds\nMPI_Init waits for every rank to start. See "
        "docs/distributed.md.\n");
    return 0;
  }
  bound_openmp_spin();  // the options are good: from here on it computes
  apply_threads(r.threads);
  apply_path(r.reference);
  set_detect_anomaly(r.detect_anomaly);
  TapeDotOutput tape_dot(r.tape_dot);
  const int code = train::run_train_command(cfg);
  tape_dot.finish(nullptr);
  return code;
}

}  // namespace

// Under mpirun or srun this process is one rank of a data-parallel run (train/distributed/);
// started on its own it is the whole run and MPI is never touched.
int train_command(const std::vector<std::string>& args) {
  return train::distributed::run_as_rank("attnlab train", [&] { return train_on_this_rank(args); });
}

int parity_command(const std::string& layer,
                   const std::vector<std::string>& config,
                   const std::string& weights,
                   const std::string& inputs,
                   const std::string& out) {
  std::map<std::string, std::string> kv;
  for (const auto& item : config) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("parity --config: expected key=value, got '" + item + "'");
    kv[item.substr(0, eq)] = item.substr(eq + 1);
  }
  check_output_file("parity --out", out);
  return nn::run_layer_parity(layer, kv, weights, inputs, out);
}

std::string list_text() {
  Table t("", {"experiment", "source", "time (2 cores)", "purpose"});
  for (const auto& e : all_experiments()) t.add_row({e.name, e.source, e.typical_time, e.purpose});
  return t.text() +
         fmt::format("\nTimes: wall time at the defaults, measured ({}).\n",
                     measured_times_origin()) +
         "Run one with `attnlab run <experiment>`; `attnlab run <experiment> --help` lists "
         "its settings.\n";
}

std::string list_json() {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& e : all_experiments())
    out.push_back({{"name", e.name},
                   {"source", e.source},
                   {"typical_time", e.typical_time},
                   {"purpose", e.purpose},
                   {"reference", e.reference},
                   {"nondeterministic",
                    {{"reason", e.nondeterministic.reason}, {"keys", e.nondeterministic.keys}}}});
  return out.dump(2) + "\n";
}

}  // namespace attn::experiments
