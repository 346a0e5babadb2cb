#include "nn/parity/parity_layers.h"

#include <fmt/format.h>

#include <set>

#include "autograd/error.h"

namespace attn::nn {

const std::vector<ParityLayerSpec>& parity_layers() {
  static const std::vector<ParityLayerSpec> all = [] {
    std::vector<ParityLayerSpec> rows;
    // One line per helper's table.
    for (ParityLayerSpec& s : core_parity_layers()) rows.push_back(std::move(s));
    for (ParityLayerSpec& s : rnn_parity_layers()) rows.push_back(std::move(s));
    for (ParityLayerSpec& s : variant_parity_layers()) rows.push_back(std::move(s));
    for (ParityLayerSpec& s : position_parity_layers()) rows.push_back(std::move(s));
    for (ParityLayerSpec& s : additive_parity_layers()) rows.push_back(std::move(s));
    for (ParityLayerSpec& s : zoo_parity_layers()) rows.push_back(std::move(s));
    for (ParityLayerSpec& s : vision_parity_layers()) rows.push_back(std::move(s));
    for (ParityLayerSpec& s : ssm_parity_layers()) rows.push_back(std::move(s));
    for (ParityLayerSpec& s : zoo_recurrent_parity_layers()) rows.push_back(std::move(s));
    for (ParityLayerSpec& s : softmax_head_parity_layers()) rows.push_back(std::move(s));
    std::set<std::string> seen;
    for (const ParityLayerSpec& s : rows)
      if (!seen.insert(s.name).second)
        throw Error("parity layer table: duplicate layer name '" + s.name + "'");
    return rows;
  }();
  return all;
}

const ParityLayerSpec& find_parity_layer(const std::string& name) {
  std::string known;
  for (const ParityLayerSpec& s : parity_layers()) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw UsageError(fmt::format("parity: unknown layer '{}' (known: {})", name, known));
}

std::string parity_layers_help() {
  std::string out;
  for (const ParityLayerSpec& s : parity_layers())
    out += fmt::format("  {:<20} {}\n", s.name, s.summary);
  return out;
}

}  // namespace attn::nn
