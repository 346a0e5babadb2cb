// attnlab: the command line of the course's experiments.
//
//   attnlab list                                  every experiment, its source and run time
//   attnlab list --json                           the same for scripts (and what may vary)
//   attnlab run worked-example                    run one with the document's settings
//   attnlab run anagrams --d_model 32 --seed 3    override any config field
//   attnlab run anagrams --help                   the fields, their defaults and meaning
//   attnlab run --all [--quick] [--only a,b]      the whole catalogue, then the claims ledger
//   attnlab claims [--run-missing] [--quick]      every document claim beside ours, from runs/
//   attnlab demo                                  a tiny model learning, loss printed as it falls
//   attnlab train reversal --model lstm           train a model on a task (train/run/)
//   attnlab run attention-zoo --plugin ./mine.so  a student's mixers beside the built-ins
//                                                 (list, run, demo and train take --plugin)
//   attnlab parity mha --config embed_dim=8 num_heads=2 --weights W --inputs I --out O
//   attnlab bench --workload W1                   the performance workloads (bench/)
//
// This file only dispatches; the commands live in experiments/cli/commands.cpp (and
// train/run, nn/parity, bench). Exit codes: 0 ok, 1 a run failed, 2 bad usage.
#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "autograd/build_info.h"
#include "autograd/error.h"
#include "autograd/kernels/isa.h"
#include "experiments/cli/claims.h"
#include "experiments/cli/commands.h"
#include "experiments/cli/openmp_spin.h"
#include "experiments/plugin/plugin_loader.h"
#include "nn/parity/parity_layers.h"
#include "train/distributed/communicator.h"
#include "train/options/suggest.h"
#ifdef ATTN_HAVE_BENCH
#include "bench/bench_main.h"
#endif

namespace {

std::string join_args(int argc, char** argv) {
  std::string s = "attnlab";
  for (int i = 1; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

// A subcommand that hands every word after it to our own parser (an experiment's fields are
// only known once its name is read, so CLI11 cannot declare them in advance).
CLI::App* pass_through(CLI::App& app, const std::string& name, const std::string& help) {
  CLI::App* sub = app.add_subcommand(name, help);
  sub->prefix_command();
  sub->set_help_flag();  // --help is ours too: it lists the experiment's fields
  return sub;
}

std::vector<std::string> with_first(const std::string& first, std::vector<std::string> rest) {
  rest.insert(rest.begin(), first);
  return rest;
}

// The parity subcommand's arguments: one layer with PyTorch's weights and inputs.
struct ParityArgs {
  std::string layer, weights, inputs, out;
  std::vector<std::string> layer_config;
};

CLI::App* add_parity(CLI::App& app, ParityArgs& a) {
  CLI::App* parity = app.add_subcommand(
      "parity", "run one layer with PyTorch's weights and inputs; write outputs and gradients");
  parity->add_option("layer", a.layer, "layer name (see below)")->required();
  parity->add_option("--config", a.layer_config, "key=value settings of the layer")
      ->expected(0, -1);
  parity->add_option("--weights", a.weights, "state_dict as safetensors")->required();
  parity->add_option("--inputs", a.inputs, "x (and memory, masks ...) and gy as safetensors")
      ->required();
  parity->add_option("--out", a.out, "where to write y and every gradient")->required();
  parity->footer("Layers:\n" + attn::nn::parity_layers_help());
  return parity;
}

// --reference / --fast: which path the layers take (parity and bench).
struct PathFlags {
  bool reference = false, fast = false;
  void add_to(CLI::App* sub) {
    CLI::Option* r = sub->add_flag("--reference", reference, "every layer from elementary ops");
    sub->add_flag("--fast", fast, "the fused kernels (the Release default)")->excludes(r);
  }
};

#ifdef ATTN_HAVE_BENCH
CLI::App* add_bench(CLI::App& app, attn::bench::BenchOptions& o) {
  CLI::App* bench =
      app.add_subcommand("bench", "time the performance workloads (W1..W7, W2r, W4d, W9..W11)");
  bench->add_option("--workload,-w", o.workload,
                    "W1..W7, W2r, W4d, W9..W11 or all (all = every one but W7, which is "
                    "data-parallel)");
  bench->add_option("--filter", o.filter, "only cases whose name contains this text");
  bench->add_option("--threads", o.threads, "threads (0 = all cores, or ATTN_THREADS)");
  bench->add_option("--steps", o.steps, "timed steps per case");
  bench->add_option("--warmup", o.warmup, "untimed steps before timing");
  bench->add_flag("--json", o.json, "print JSON instead of a table");
  return bench;
}
#endif

// `attnlab list [--json]`: the experiments (with --plugin, the mixers too).
CLI::App* add_list(CLI::App& app, bool& as_json) {
  CLI::App* list = app.add_subcommand("list", "every experiment: name, source, run time, purpose");
  list->add_flag("--json", as_json, "the same as JSON, for scripts (and what may vary)");
  return list;
}

// An unknown first word gets the closest command named; CLI11 alone would say less.
bool known_command(CLI::App& app, int argc, char** argv) {
  if (argc <= 1 || argv[1][0] == '-') return true;
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    commands.push_back(sub->get_name());
  const std::string cmd = argv[1];
  if (std::find(commands.begin(), commands.end(), cmd) != commands.end()) return true;
  fmt::print(stderr, "attnlab: unknown command '{}'.{}\n", cmd,
             attn::train::options::did_you_mean(cmd, commands));
  return false;
}

// Before CLI11 parses: the ATTN_ISA choice (a bad value or one this CPU lacks), the command word,
// and --plugin FILE (list, run, demo, train), taken out of words here and loaded before the
// dispatch. False (with the message printed): exit 2.
bool check_before_parsing(CLI::App& app,
                          int argc,
                          char** argv,
                          bool takes_plugins,
                          std::vector<std::string>& words,
                          std::vector<std::string>& plugins) {
  try {
    attn::kernels::check_isa_choice();
    if (!known_command(app, argc, argv)) return false;
    if (takes_plugins) plugins = attn::experiments::take_plugin_flags(words);
    return true;
  } catch (const attn::UsageError& e) {
    fmt::print(stderr, "attnlab: {}\n", e.what());
    return false;
  }
}

// One write() for the whole text: stdio would send it in 4096-byte pieces, and a reader that
// stops at its first match (`attnlab list | grep -q name`) could close the pipe between them,
// ending us with SIGPIPE (a failed pipeline under pipefail). Returns the exit code.
int write_all(const std::string& text) {
  std::fflush(stdout);
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return 1;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// `attnlab run --all` and `attnlab claims` (experiments/cli/claims.h); nullopt: neither.
std::optional<int> ledger_command(CLI::App* run, CLI::App* claims, const std::string& command) {
  namespace ex = attn::experiments;
  if (*run && ex::asks_for_all(run->remaining()))
    return ex::run_all_command(run->remaining(), command);
  if (*claims) return ex::claims_command(claims->remaining(), command);
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  attn::experiments::remember_command_line(argv);
  CLI::App app{"attnlab: run the course's attention experiments and write their reports"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] { return attn::build_summary(); });
  bool list_as_json = false;
  CLI::App* list = add_list(app, list_as_json);
  CLI::App* run = pass_through(app, "run",
                               "attnlab run <experiment> [--field value ...] [--out DIR] "
                               "[--seed S] [--threads N] [--quick]");
  CLI::App* claims = pass_through(app, "claims", "every document claim beside ours (--help)");
  CLI::App* demo =
      pass_through(app, "demo", "train a tiny model and watch its loss fall (options as run)");
  CLI::App* train = pass_through(app, "train",
                                 "attnlab train [<task>] --model M [--key value ...]: train a "
                                 "model on a task (--help lists the options)");
  ParityArgs parity_args;
  CLI::App* parity = add_parity(app, parity_args);
  PathFlags path;
  path.add_to(parity);
#ifdef ATTN_HAVE_BENCH
  attn::bench::BenchOptions bench_opt;
  CLI::App* bench = add_bench(app, bench_opt);
  path.add_to(bench);
#endif
  app.footer("attnlab run <experiment> --help lists the experiment's settings.");

  std::vector<std::string> words(argv, argv + argc), plugins;
  const bool takes_plugins =
      argc > 1 && std::string(argv[1]) != "parity" && std::string(argv[1]) != "bench";
  if (!check_before_parsing(app, argc, argv, takes_plugins, words, plugins)) return 2;
  std::vector<char*> kept;
  for (std::string& w : words) kept.push_back(w.data());
  try {
    app.parse(static_cast<int>(kept.size()), kept.data());
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  const std::string command = join_args(argc, argv);
  namespace ex = attn::experiments;
  try {
    if (takes_plugins) ex::load_plugins(plugins);
    if (*list)
      return write_all(list_as_json
                           ? ex::list_json()
                           : ex::list_text() + (plugins.empty() ? "" : ex::mixer_list_text()));
    if (const auto code = ledger_command(run, claims, command)) return *code;
    // Under mpirun, experiments that train do so data-parallel (train/distributed/).
    if (*run)
      return attn::train::distributed::run_as_rank("attnlab run", [&] {
        return ex::run_experiment(ex::parse_run_args(run->remaining()), command);
      });
    if (*demo)
      return ex::run_experiment(ex::parse_run_args(with_first("demo", demo->remaining())), command);
    if (*train) return ex::train_command(train->remaining());
    if (path.reference || path.fast) ex::apply_path(path.reference);
    if (*parity)
      return ex::parity_command(parity_args.layer, parity_args.layer_config, parity_args.weights,
                                parity_args.inputs, parity_args.out);
#ifdef ATTN_HAVE_BENCH
    // Under mpirun the ranks of W7 work together (train/distributed/); alone, MPI is unused.
    if (*bench) {
      ex::bound_openmp_spin();
      return attn::train::distributed::run_as_rank(
          "attnlab bench", [&] { return attn::bench::run_bench_command(bench_opt); });
    }
#endif
  } catch (const attn::UsageError& e) {
    fmt::print(stderr, "attnlab: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "attnlab: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
