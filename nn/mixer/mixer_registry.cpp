#include "nn/mixer/mixer_registry.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "nn/row_names.h"

namespace attn::nn {

namespace {

using row_names::lowered, row_names::shown;

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
  if (!row_names::valid(row.name))
    throw UsageError(
        fmt::format("mixer name '{}' must be non-empty and use only letters, "
                    "digits, '_', '-' and '.'",
                    shown(row.name)));
  if (!row.make) throw UsageError(fmt::format("mixer '{}' has no factory (.make)", row.name));
  for (const MixerRow& r : rows_)
    if (lowered(r.name) == lowered(row.name))
      throw UsageError(fmt::format("mixer name '{}' is taken (mixer '{}', {}); choose another",
                                   row.name, r.name, row_names::origin_text(r.origin)));
  rows_.push_back(std::move(row));
}

const MixerRow* MixerRegistry::find(const std::string& name) const {
  for (const MixerRow& r : rows_)
    if (r.name == name) return &r;
  return nullptr;
}

std::vector<MixerRow> MixerRegistry::plugin_rows() const {
  std::vector<MixerRow> out;
  for (const MixerRow& r : rows_)
    if (!r.origin.empty()) out.push_back(r);
  return out;
}

std::vector<std::string> MixerRegistry::names() const {
  std::vector<std::string> out;
  for (const MixerRow& r : rows_) out.push_back(r.name);
  return out;
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
