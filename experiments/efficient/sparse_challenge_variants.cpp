#include "experiments/efficient/sparse_challenge_variants.h"

#include "experiments/kit/classifier_steps.h"
#include "experiments/kit/kit.h"

namespace attn::experiments::sparse {

namespace {

// --globals positions spread evenly over T: 0, T/g, 2T/g, ...
std::vector<int64_t> global_positions(int64_t count, int64_t t) {
  std::vector<int64_t> g;
  for (int64_t i = 0; i < count; ++i) g.push_back(i * t / count);
  return g;
}

}  // namespace

std::vector<Variant> variants(const Config& cfg) {
  std::vector<Variant> vs = {
      {"banded", "banded", std::nullopt},
      {"dense", "dense", std::nullopt},
      {"global", cfg.get_int("random_links") > 0 ? "banded + global + random" : "banded + global",
       std::nullopt}};
  for (nn::MixerRow& row : nn::mixer_registry().plugin_rows()) {
    const std::string name = row.name;
    vs.push_back({name, name, std::move(row)});
  }
  return vs;
}

LongRangeClassifierOptions model_options(
    const Config& cfg, const Variant& v, size_t index, int64_t vocab, int64_t t, uint64_t seed) {
  LongRangeClassifierOptions o{.vocab = vocab,
                               .max_len = t,
                               .d_model = cfg.get_int("d_model"),
                               .nhead = cfg.get_int("nhead"),
                               .layers = cfg.get_int("num_layers"),
                               .window = cfg.get_int("window")};
  if (v.plugin) {
    o.mixer = v.plugin->make;
    return o;
  }
  o.banded = index != kDense;
  if (index == kGlobal) {
    o.global_tokens = global_positions(cfg.get_int("globals"), t);
    o.random_links = cfg.get_int("random_links");
  }
  o.random_seed = seed;
  return o;
}

data::LongRangeTask make_task(const std::string& mode, int64_t t) {
  return data::LongRangeTask(
      {.mode = mode == "match" ? data::LongRangeMode::kMatch : data::LongRangeMode::kMajority,
       .seq_len = t});
}

Trained train_and_eval(const Config& cfg,
                       const Variant& v,
                       size_t index,
                       const std::string& mode,
                       int64_t t,
                       uint64_t seed) {
  const data::LongRangeTask task = make_task(mode, t);
  Generator init(seed), data_gen(seed + 1), eval_gen(seed + 2);
  LongRangeClassifier m(model_options(cfg, v, index, task.tokenizer().vocab_size(), t, seed), init);
  const int64_t steps = cfg.get_int("steps");
  const train::TrainResult r =
      kit::train_classifier(m, task, fmt::format("model {} on {} T = {}", index, mode, t), steps,
                            cfg.get_int("batch_size"), cfg.get_real("lr"), data_gen);
  // Held out in chunks small enough that a dense (B,H,T,T) stays modest.
  const int64_t chunk = std::max<int64_t>(1, 8192 / t);
  return {
      kit::class_accuracy(m, kit::class_batches(task, cfg.get_int("eval_size"), chunk, eval_gen)),
      1e3 * r.train_seconds / static_cast<double>(steps)};
}

void plugin_cost_notes(RunContext& ctx,
                       const std::vector<Variant>& vs,
                       const kit::StepCosts& r,
                       const std::vector<double>& slope_mem,
                       const std::vector<double>& slope_time) {
  for (size_t m = kBuiltIns; m < vs.size(); ++m)
    ctx.note(fmt::format(
        "Plugin mixer '{}': memory grows like T^{:.2f} and time like T^{:.2f} (from T = {:.0f}); "
        "at T = {:.0f} its step takes {:.3g} ms and {:.3g} MiB of tensors, against dense "
        "attention's {:.3g} ms and {:.3g} MiB.",
        vs[m].key, slope_mem[m], slope_time[m], r.slope_from(), r.ts.back(), r.ms[m].back(),
        r.mib[m].back(), r.ms[kDense].back(), r.mib[kDense].back()));
}

}  // namespace attn::experiments::sparse
