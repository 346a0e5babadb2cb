// libFuzzer harness: the command-line parsing behind `attnlab run <experiment> --field value`
// and `attnlab train [<task>] --key value` (parse_run_args, Config::set, set_train_option,
// validate_train_config, the experiment's `check` hook). Nothing is run: only the words are
// parsed and checked. tests/fuzz/corpus/options/exp_<experiment>_<k> seed every field of every
// experiment (its own and its shared groups') with its default, so each is reached from the start.
//
//   scripts/fuzz options 600
//
// The input is split at newlines into argument words. The contract checked: every word list
// is accepted or rejected with attn::Error (UsageError for bad usage); an accepted value
// prints back (format_value / get_train_option) to text that parses to the same value.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "autograd/error.h"
#include "experiments/cli/commands.h"
#include "experiments/config.h"
#include "experiments/registry.h"
#include "tests/fuzz/split_words.h"
#include "train/run/train_config.h"

namespace {

namespace ex = attn::experiments;
namespace tr = attn::train;

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "fuzz_options: %s\n", what.c_str());
  std::abort();
}

// `attnlab run`: the experiment's config takes the overrides; each accepted field's printed
// value must parse back to itself. Then the experiment's own cross-field check (its `check`
// hook, which reads the shared groups: check_model, read_optimizer, ...) accepts or throws.
void check_run(const ex::RunRequest& r) {
  const ex::Experiment& e = ex::find_experiment(r.name);
  const ex::Config cfg = ex::resolve_config(e, r);
  for (const ex::Field& f : cfg.fields()) {
    ex::Config again = cfg;
    const std::string text = ex::format_value(f.value);
    again.set(f.name, text);
    if (ex::format_value(again.fields()[&f - cfg.fields().data()].value) != text)
      bug("field " + f.name + " does not round-trip through '" + text + "'");
  }
  if (e.check) e.check(cfg);
}

// `attnlab train`: the same for TrainConfig.
void check_train(const ex::RunRequest& r) {
  tr::TrainConfig cfg;
  if (!r.name.empty()) tr::set_train_option(cfg, "task", r.name);
  if (!r.out.empty()) tr::set_train_option(cfg, "out", r.out);
  for (const auto& [k, v] : r.overrides) tr::set_train_option(cfg, k, v);
  tr::validate_train_config(cfg);
  for (const std::string& key : tr::train_option_names()) {
    const std::string text = tr::get_train_option(cfg, key);
    tr::TrainConfig again = cfg;
    tr::set_train_option(again, key, text);
    if (tr::get_train_option(again, key) != text)
      bug("train option " + key + " does not round-trip through '" + text + "'");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> args =
      attn::fuzz::split_words(std::string(reinterpret_cast<const char*>(data), size), 24);
  ex::RunRequest r;
  try {
    r = ex::parse_run_args(args, false);
  } catch (const attn::Error&) {
    return 0;
  }
  try {
    check_train(r);
  } catch (const attn::Error&) {
  }
  if (!r.name.empty()) try {
      check_run(r);
    } catch (const attn::Error&) {
    }
  return 0;
}
