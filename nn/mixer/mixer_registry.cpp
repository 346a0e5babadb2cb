#include "nn/mixer/mixer_registry.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "nn/row_names.h"

namespace attn::nn {

namespace {

void add_builtins(MixerRegistry& r) {
  r.add({"softmax", "000 §3 (the baseline)", "every query scores every key: O(T^2)", true,
         [](const MixerShape& s, int64_t, Generator& g) {
           return softmax_mixer(s.d_model, s.nhead, true, g);
         }});
  r.add({"linear", "000 §8.2", "phi = elu + 1 features, one fixed-size state: O(T)", true,
         [](const MixerShape& s, int64_t, Generator& g) {
           return linear_mixer(s.d_model, s.nhead, true, g);
         }});
  r.add({"window", "003 (sliding window)", "each query sees the last `window` keys: O(T w)", true,
         [](const MixerShape& s, int64_t, Generator& g) {
           return window_mixer(s.d_model, s.nhead, s.window, true, g);
         }});
}

}  // namespace

void MixerRegistry::add(MixerRow row) {
  row_names::check_new_row("mixer", row, static_cast<bool>(row.make), "has no factory (.make)", {},
                           rows_);
  rows_.push_back(std::move(row));
}

const MixerRow* MixerRegistry::find(const std::string& name) const {
  return row_names::find_row(rows_, name);
}

std::vector<MixerRow> MixerRegistry::plugin_rows() const {
  std::vector<MixerRow> out;
  for (const MixerRow& r : rows_)
    if (!r.origin.empty()) out.push_back(r);
  return out;
}

std::vector<std::string> MixerRegistry::names() const {
  return row_names::names_of(rows_);
}

MixerRegistry& mixer_registry() {
  static MixerRegistry* registry = [] {
    auto* r = new MixerRegistry;  // never destroyed: plugin rows hold code of unloaded libraries
    add_builtins(*r);
    return r;
  }();
  return *registry;
}

}  // namespace attn::nn
