// libFuzzer harness: what a `--plugin` library declares, fed to the code that validates it
// before anything runs: the `--plugin FILE` words (take_plugin_flags), the rows an ATTN_PLUGIN
// registration adds (nn::PluginRegistry's add_mixer, add_score_bias, add_feature_map and
// add_feed_forward, then each kind's registry add() on a copy of the process's registry, the
// mixers' holding the built-ins and the experiments' rows, as the loader does), and the listing's
// table of those rows (text and HTML). No library is loaded.
//
//   scripts/fuzz plugin 600
//
// The input is split at newlines into words. All of them are the command line given to
// take_plugin_flags. Then word 0 is the plugin file (the rows' origin) and every four words
// after it are one row: name, source, idea, and a flags word whose first byte says causal
// (bit 0), "no function" (bit 1: no factory, bias or map) and the kind (bits 2-3: 0 a mixer, 1 a
// score bias, 2 a feature map, 3 a feed-forward block). The contract checked:
//   - take_plugin_flags accepts (every file non-empty and given as `--plugin F` or
//     `--plugin=F`; no --plugin word left) or throws a UsageError naming --plugin;
//   - a row is accepted exactly when its name is non-empty and only [A-Za-z0-9_.-], it has its
//     function, and no row of its kind nor a reserved name (a built-in positional scheme's for a
//     score bias, a built-in readout's for a feature map, an activation's for a feed-forward
//     block) holds the name ignoring case; a refusal is a UsageError that quotes the name, its
//     control bytes as \xNN, and holds no control byte (a NUL would cut what() short, an escape
//     sequence would reach the terminal); an accepted row is found by its name with the plugin
//     file as its origin;
//   - the table renders, and every cell is in its HTML through xml_escape.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "autograd/error.h"
#include "autograd/generator.h"
#include "experiments/plugin/plugin_loader.h"
#include "experiments/report/table.h"
#include "nn/attention/feature_map_registry.h"
#include "nn/attention/linear_attention.h"
#include "nn/feedforward_registry.h"
#include "nn/mixer/mixer_registry.h"
#include "nn/mixer/plugin.h"
#include "nn/positional/position_kind.h"
#include "nn/positional/score_bias_registry.h"
#include "tests/fuzz/split_words.h"

namespace {

namespace ex = attn::experiments;
namespace nn = attn::nn;

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "fuzz_plugin: %s\n", what.c_str());
  std::abort();
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The rule of nn/mixer/mixer_registry.h, written out again (C locale, byte by byte).
bool valid_name(const std::string& name) {
  if (name.empty()) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string lowered(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

// A name as a refusal quotes it: control bytes (NUL, ESC, ...) as \xNN, the rest as they are.
std::string shown(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", b);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

// Whether a row of `r` already holds `name` (ignoring case).
template <class Registry>
bool taken(const Registry& r, const std::string& name) {
  for (const auto& row : r.rows())
    if (lowered(row.name) == lowered(name)) return true;
  return false;
}

bool reserved(const std::vector<std::string>& names, const std::string& name) {
  for (const std::string& n : names)
    if (lowered(n) == lowered(name)) return true;
  return false;
}

void check_plugin_flags(const std::vector<std::string>& args) {
  std::vector<std::string> rest = args;
  std::vector<std::string> files;
  try {
    files = ex::take_plugin_flags(rest);
  } catch (const attn::UsageError& e) {
    if (std::string(e.what()).find("--plugin") == std::string::npos)
      bug(std::string("a refused --plugin word list does not name --plugin: ") + e.what());
    return;
  }
  for (const std::string& w : rest)
    if (w == "--plugin" || starts_with(w, "--plugin=")) bug("'" + w + "' left among the words");
  size_t consumed = 0;
  for (const std::string& f : files) {
    if (f.empty()) bug("an empty --plugin file was accepted");
    consumed += 1;
    bool given = false;
    for (size_t i = 0; i < args.size() && !given; ++i)
      given = args[i] == "--plugin=" + f ||
              (args[i] == "--plugin" && i + 1 < args.size() && args[i + 1] == f);
    if (!given) bug("file '" + f + "' was not given after --plugin");
  }
  if (rest.size() + consumed > args.size()) bug("take_plugin_flags invented words");
}

// One accepted row, as the listing shows it.
struct Listed {
  std::string name, idea;
};

// Row `at` of the words: name, source, idea, flags (bit 0 causal, bit 1 no function, bits 2-3
// the kind: 0 a mixer, 1 a score bias, 2 a feature map, 3 a feed-forward block).
unsigned flags_of(const std::vector<std::string>& w, size_t at) {
  return w[at + 3].empty() ? 0u : static_cast<unsigned char>(w[at + 3][0]);
}

void add_fuzzed_row(nn::PluginRegistry& collected, const std::vector<std::string>& w, size_t at) {
  const unsigned flags = flags_of(w, at);
  const bool with_function = (flags & 2) == 0;
  switch ((flags >> 2) & 3) {
    case 1: {
      nn::ScoreBiasRow row{.name = w[at], .source = w[at + 1], .idea = w[at + 2]};
      if (with_function)
        row.bias = [](int64_t, int64_t, int64_t i, int64_t j) { return -1.0 * (i - j); };
      collected.add_score_bias(row);
      return;
    }
    case 2: {
      nn::FeatureMapRow row{.name = w[at], .source = w[at + 1], .idea = w[at + 2]};
      if (with_function) row.phi = nn::elu_feature_map;
      collected.add_feature_map(row);
      return;
    }
    case 3: {
      nn::FeedForwardRow row{.name = w[at], .source = w[at + 1], .idea = w[at + 2]};
      if (with_function) row.make = [](int64_t, int64_t, attn::Generator&) { return nullptr; };
      collected.add_feed_forward(row);  // the factory is not called: names are what is checked
      return;
    }
    default: {
      nn::MixerRow row{
          .name = w[at], .source = w[at + 1], .idea = w[at + 2], .causal = (flags & 1) != 0};
      if (with_function)
        row.make = [](const nn::MixerShape& s, int64_t, attn::Generator& g) {
          return nn::linear_mixer(s.d_model, s.nhead, true, g);
        };
      collected.add_mixer(row);
    }
  }
}

// The loader's step 4 for one kind, on a copy of its registry: each row is accepted exactly when
// its name is plain, it has its function, and neither a reserved name nor an earlier row holds
// the name ignoring case. Appends the accepted rows to `listed`.
template <class Registry, class Row>
void check_kind(const std::string& file,
                const Registry& process_registry,
                const std::vector<Row>& rows,
                const std::vector<std::string>& reserved_names,
                bool (*has_function)(const Row&),
                std::vector<Listed>& listed) {
  Registry trial = process_registry;
  const size_t before = trial.rows().size();
  size_t accepted = 0;
  for (const Row& row : rows) {
    if (row.origin != file) bug("the registry did not set the row's origin to the plugin file");
    const bool expected = valid_name(row.name) && has_function(row) &&
                          !reserved(reserved_names, row.name) && !taken(trial, row.name);
    try {
      trial.add(row);
    } catch (const attn::UsageError& e) {
      if (expected) bug("row '" + row.name + "' refused: " + e.what());
      const std::string message = e.what();
      if (message.find("'" + shown(row.name) + "'") == std::string::npos)
        bug("the refusal does not quote the name '" + shown(row.name) + "': " + message);
      if (shown(message) != message) bug("a control byte in the refusal: " + shown(message));
      continue;
    }
    if (!expected) bug("row '" + row.name + "' accepted against the naming rule");
    const Row* found = trial.find(row.name);
    if (!found || found->origin != file) bug("accepted row '" + row.name + "' not found");
    listed.push_back({row.name, row.idea});
    ++accepted;
  }
  if (trial.rows().size() != before + accepted) bug("the registry miscounts its rows");
}

std::vector<Listed> check_rows(const std::vector<std::string>& w) {
  const std::string& file = w[0];
  nn::PluginRegistry collected(file);
  for (size_t at = 1; at + 4 <= w.size(); at += 4) add_fuzzed_row(collected, w, at);
  std::vector<Listed> listed;
  check_kind<nn::MixerRegistry, nn::MixerRow>(
      file, nn::mixer_registry(), collected.mixers(), {},
      [](const nn::MixerRow& r) { return static_cast<bool>(r.make); }, listed);
  check_kind<nn::ScoreBiasRegistry, nn::ScoreBiasRow>(
      file, nn::score_bias_registry(), collected.score_biases(), nn::position_kind_names(),
      [](const nn::ScoreBiasRow& r) { return static_cast<bool>(r.bias); }, listed);
  check_kind<nn::FeatureMapRegistry, nn::FeatureMapRow>(
      file, nn::feature_map_registry(), collected.feature_maps(), nn::reserved_feature_map_names(),
      [](const nn::FeatureMapRow& r) { return static_cast<bool>(r.phi); }, listed);
  check_kind<nn::FeedForwardRegistry, nn::FeedForwardRow>(
      file, nn::feed_forward_registry(), collected.feed_forwards(),
      {"relu", "gelu", "gelu_tanh", "swiglu"},  // nn::Activation's names
      [](const nn::FeedForwardRow& r) { return static_cast<bool>(r.make); }, listed);
  return listed;
}

// The listing's table of the rows (experiments/plugin/plugin_loader.cpp, mixer_list_text).
void check_table(const std::string& file, const std::vector<Listed>& rows) {
  ex::Table t("", {"row", "from", "check", "idea"});
  for (const Listed& r : rows)
    t.add_row({r.name, file, "passed (worst 0.10 of the tolerance)", r.idea});
  (void)t.text();
  const std::string html = t.html();
  for (const Listed& r : rows)
    for (const std::string& cell : {r.name, file, r.idea})
      if (html.find(ex::xml_escape(cell) + "</td>") == std::string::npos)
        bug("the cell '" + cell + "' is not in the HTML, escaped");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool ready = [] {
    ex::register_builtin_mixers();  // the names a plugin may not take, as when loading
    return true;
  }();
  (void)ready;
  std::vector<std::string> words =
      attn::fuzz::split_words(std::string(reinterpret_cast<const char*>(data), size), 41);
  check_plugin_flags(words);
  if (words[0].empty()) words[0] = "p.so";  // the loader never gets an empty file (refused above)
  check_table(words[0], check_rows(words));
  return 0;
}
