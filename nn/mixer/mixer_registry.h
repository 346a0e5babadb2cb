// The open registry of token mixers (attention variants and other sequence mixers): one row per
// mixer, name -> how to build it for a model shape. attention-zoo runs the plugin rows beside
// its own variants, and `attnlab train --model mixer --mixer NAME` trains any row. A student adds
// rows from a shared library (nn/mixer/plugin.h).
//
//   const nn::MixerRow* row = nn::mixer_registry().find("softmax");
//   nn::MixerShape shape{.d_model = 32, .nhead = 2, .max_len = 64, .layers = 2};
//   nn::MixerModel m(opts, [&](int64_t l, Generator& g) { return row->make(shape, l, g); }, gen);
//   for (const nn::MixerRow& r : nn::mixer_registry().plugin_rows()) ...   // the students' rows
//
// Built in from the start: softmax, linear and window (nn/mixer/mixer_model.h). The experiments
// add their own variants (attention-zoo's zoo, S6) through the same add() before any plugin
// loads, so a plugin cannot take a name a built-in already has.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "nn/mixer/mixer_model.h"

namespace attn::nn {

// What a mixer is built for: width, heads, the longest input (layers with length-sized
// parameters, such as Linformer's projections, size them by max_len), the depth of the stack
// (a hybrid decides per layer) and the band of a windowed mixer.
struct MixerShape {
  int64_t d_model = 32, nhead = 2, max_len = 256, layers = 2, window = 16;
};

struct MixerRow {
  std::string name;    // as typed on the command line, e.g. "linformer"
  std::string source;  // document and section, e.g. "004 §3" (or the student's own words)
  std::string idea;    // one line for the report's table
  bool causal = true;  // position t reads positions <= t only
  std::function<Mixer(const MixerShape&, int64_t layer, Generator&)> make;
  std::string origin;  // "" for a built-in; the plugin file that added the row
};

class MixerRegistry {
 public:
  // Adds a row. Throws attn::UsageError when the name is empty, has characters other than
  // [A-Za-z0-9_.-], has no factory, or is already taken (compared ignoring case), naming who
  // holds it: "built in" or the plugin file. (The plugin loader puts the file before it.)
  void add(MixerRow row);
  // The row called `name` (exact), or nullptr.
  const MixerRow* find(const std::string& name) const;
  const std::vector<MixerRow>& rows() const { return rows_; }
  std::vector<MixerRow> plugin_rows() const;  // rows with an origin, in the order added
  std::vector<std::string> names() const;

 private:
  std::vector<MixerRow> rows_;
};

// The process's registry (softmax, linear, window already in it).
MixerRegistry& mixer_registry();

}  // namespace attn::nn
