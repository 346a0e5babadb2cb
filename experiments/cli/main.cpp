// attnlab: the command line of the course's experiments.
//
//   attnlab list                                  every experiment, its source and run time
//   attnlab run worked-example                    run one with the document's settings
//   attnlab run anagrams --d_model 32 --seed 3    override any config field
//   attnlab run anagrams --help                   the fields, their defaults and meaning
//   attnlab demo                                  a tiny model learning, loss printed as it falls
//
// This file only dispatches; the commands live in experiments/cli/commands.cpp.
// Exit codes: 0 ok, 1 a run failed, 2 bad usage.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

#include "autograd/error.h"
#include "experiments/cli/commands.h"
#include "experiments/suggest.h"

namespace {

const std::vector<std::string> kCommands{"list", "run", "demo"};

std::string join_args(int argc, char** argv) {
  std::string s = "attnlab";
  for (int i = 1; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

// A subcommand that hands every word after it to our own parser (its fields depend on the
// experiment, so CLI11 cannot know them in advance).
CLI::App* pass_through(CLI::App& app, const std::string& name, const std::string& help) {
  CLI::App* sub = app.add_subcommand(name, help);
  sub->prefix_command();
  sub->set_help_flag();  // --help is ours too: it lists the experiment's fields
  return sub;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attnlab: run the course's attention experiments and write their reports"};
  app.require_subcommand(1);
  CLI::App* list = app.add_subcommand("list", "every experiment: name, source, run time, purpose");
  CLI::App* run = pass_through(app, "run",
                               "attnlab run <experiment> [--field value ...] [--out DIR] [--seed "
                               "S] [--threads N] [--quick]");
  CLI::App* demo =
      pass_through(app, "demo", "train a tiny model and watch its loss fall (same options as run)");
  app.footer("attnlab run <experiment> --help lists the experiment's settings.");

  if (argc > 1 && argv[1][0] != '-') {
    const std::string cmd = argv[1];
    if (std::find(kCommands.begin(), kCommands.end(), cmd) == kCommands.end()) {
      fmt::print(stderr, "attnlab: unknown command '{}'.{}\n", cmd,
                 attn::experiments::did_you_mean(cmd, kCommands));
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  const std::string command = join_args(argc, argv);
  try {
    if (*list) {
      fmt::print("{}", attn::experiments::list_text());
      return 0;
    }
    if (*run)
      return attn::experiments::run_experiment(attn::experiments::parse_run_args(run->remaining()),
                                               command);
    if (*demo) {
      std::vector<std::string> args{"demo"};
      for (const auto& a : demo->remaining()) args.push_back(a);
      return attn::experiments::run_experiment(attn::experiments::parse_run_args(args), command);
    }
  } catch (const attn::UsageError& e) {
    fmt::print(stderr, "attnlab: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "attnlab: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
