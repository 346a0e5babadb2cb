#include "experiments/cli/commands.h"

#include <chrono>
#include <exception>
#include <map>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/kernels/parallel.h"
#include "autograd/mode.h"
#include "experiments/common/tape_figure.h"
#include "experiments/registry.h"
#include "nn/parity/run_layer_parity.h"
#include "train/run/run_train.h"
#include "train/run/train_config.h"

namespace attn::experiments {

namespace {

bool is_flag(const std::string& s) {
  return s.size() > 2 && s.rfind("--", 0) == 0;
}

int parse_threads(const std::string& text) {
  char* end = nullptr;
  const long n = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || n < 0 || n > 1024)
    throw UsageError("--threads: expected a whole number of threads (0 = all cores), got '" + text +
                     "'");
  return static_cast<int>(n);
}

}  // namespace

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

std::string run_help(const Experiment& e, const Config& cfg) {
  std::string s = fmt::format(
      "attnlab run {} [--field value ...] [--out DIR] [--seed S] "
      "[--threads N] [--quick] [--reference | --fast]\n\n  {}\n  source: {}   typical time: "
      "{}\n\n",
      e.name, e.purpose, e.source, e.typical_time);
  s += "Fields (defaults are the document's settings; '-' and '_' are interchangeable):\n";
  s += cfg.help_text();
  s += "\nOptions:\n";
  s += "  --out DIR      write the run folder here (default runs/" + e.name + "/<time>/)\n";
  s += "  --threads N    threads for BLAS and our kernels (default: ATTN_THREADS or all cores)\n";
  s += fmt::format(
      "  --reference    every layer built from elementary ops (matmul, softmax, ...){}\n"
      "  --fast         the fused kernels{}\n",
      e.reference ? " (default here)" : "", e.reference ? "" : " (default in Release)");
  s += "  --tape-dot F   write the first recorded graph to F as Graphviz dot (and F.svg)\n";
  s += "  --quick        a fast, smaller run (for tests)";
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
  apply_threads(request.threads);
  apply_path(request.reference, e.reference);
  RunOptions options;
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
    fmt::print(stderr, "attnlab run {}: failed: {}\n", e.name, err.what());
    return 1;
  }
  ctx.finish(elapsed());
  fmt::print("{}: done in {:.2f} s\n", e.name, elapsed());
  return 0;
}

int train_command(const std::vector<std::string>& args) {
  const RunRequest r = parse_run_args(args, false);
  if (r.help) {
    fmt::print(
        "attnlab train [<task>] [--key value ...] [--threads N] [--reference | --fast]\n\n{}",
        train::train_options_help());
    fmt::print("attnlab train [<task>] [--key value ...] [--threads N] [--tape-dot FILE]\n\n{}",
               train::train_options_help());
    return 0;
  }
  if (r.quick) throw UsageError("attnlab train: --quick belongs to `attnlab run`; use --steps N");
  train::TrainConfig cfg;
  if (!r.name.empty()) train::set_train_option(cfg, "task", r.name);
  if (!r.out.empty()) train::set_train_option(cfg, "out", r.out);
  for (const auto& [k, v] : r.overrides) train::set_train_option(cfg, k, v);
  train::validate_train_config(cfg);  // every mistake reported before threads or files change
  apply_threads(r.threads);
  apply_path(r.reference);
  TapeDotOutput tape_dot(r.tape_dot);
  const int code = train::run_train_command(cfg);
  tape_dot.finish(nullptr);
  return code;
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
  return nn::run_layer_parity(layer, kv, weights, inputs, out);
}

std::string list_text() {
  Table t("", {"experiment", "source", "time (2 cores)", "purpose"});
  for (const auto& e : all_experiments()) t.add_row({e.name, e.source, e.typical_time, e.purpose});
  return t.text() +
         "\nRun one with `attnlab run <experiment>`; `attnlab run <experiment> --help` lists "
         "its settings.\n";
}

}  // namespace attn::experiments
