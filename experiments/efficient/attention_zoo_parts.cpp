#include "experiments/efficient/attention_zoo_parts.h"

#include "experiments/kit/kit.h"

#include "data/tasks/long_range.h"
#include "data/tasks/recall.h"
#include "experiments/kit/classifier_steps.h"
#include "experiments/kit/require_increasing.h"
#include "experiments/kit/step_costs.h"

namespace attn::experiments::zoo {

namespace {

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= text.size()) {
    const size_t comma = std::min(text.find(',', from), text.size());
    out.push_back(text.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

// Accuracy on n fresh examples in batches of 100 (the model stays in training mode: a memory
// variant may read it).
double accuracy(const MixerModel& m, const data::Task& task, int64_t n, Generator& gen) {
  NoGrad off;
  kit::Accuracy acc;
  for (const kit::ClassBatch& b : kit::class_batches(task, n, 100, gen))
    acc.add(m.forward(b.ids).value(), b.labels);
  return acc.value();
}

// Growth exponents over the three longest lengths (where the T^2 or T term dominates), fitted
// on the medians: their table and results, and every variant's costs in the results.
void growth_exponents(Costs& c, const std::vector<ZooVariant>& vs, RunContext& ctx) {
  const double from = c.slope_from();
  Table slopes(
      fmt::format("Growth exponents from T = {:.0f} (y ~ T^p, least squares on log-log)", from),
      {"variant", "time p", "memory p"});
  for (size_t i = 0; i < vs.size(); ++i) {
    c.time_slope.push_back(log_log_slope(c.ts, c.ms[i], from));
    c.memory_slope.push_back(log_log_slope(c.ts, c.mib[i], from));
    slopes.add_row({vs[i].name, fixed(c.time_slope[i], 2), fixed(c.memory_slope[i], 2)});
    ctx.result("step_ms_" + vs[i].name, c.ms[i]);
    ctx.result("peak_tensor_mib_" + vs[i].name, c.mib[i]);
    ctx.result("time_slope_" + vs[i].name, c.time_slope[i]);
    ctx.result("memory_slope_" + vs[i].name, c.memory_slope[i]);
  }
  ctx.table(slopes);
}

void accuracy_figure(const Config& cfg,
                     RunContext& ctx,
                     const std::vector<ZooVariant>& vs,
                     const Accuracies& a) {
  BarChart bars;
  bars.title =
      fmt::format("Held-out accuracy (recall {} steps, {} {} steps)", cfg.get_int("recall_steps"),
                  cfg.get_string("long_mode"), cfg.get_int("long_steps"));
  bars.labels = names_of(vs);
  bars.series = {{"recall", a.recall, ""}, {cfg.get_string("long_mode"), a.long_range, ""}};
  bars.y_label = "accuracy";
  bars.y_max = 1.0;
  ctx.figure("accuracy", bar_chart_svg(bars), "Accuracy per variant on both tasks");
}

}  // namespace

void models_note(const Config& cfg,
                 RunContext& ctx,
                 const std::vector<ZooVariant>& vs,
                 const std::string& positions) {
  ctx.note(fmt::format(
      "Variants: {}. Models: d_model {}, {} heads, {} layers, feed-forward 2 d_model, {}, "
      "read-out at the last position.",
      fmt::join(names_of(vs), ", "), cfg.get_int("d_model"), cfg.get_int("nhead"),
      cfg.get_int("num_layers"), positions));
  ctx.note(mixer_parameter_note(vs, {cfg.get_int("d_model"), cfg.get_int("nhead"),
                                     cfg.get_int("long_len"), cfg.get_int("num_layers")}));
}

std::vector<ZooVariant> chosen_variants(const Config& cfg,
                                        const std::vector<ZooVariant>& all,
                                        const std::string& experiment) {
  const std::string text = cfg.get_string("variants");
  if (text.empty()) return all;
  const std::vector<std::string> known = names_of(all);
  std::vector<ZooVariant> out;
  for (const std::string& name : split_names(text)) {
    const auto it = std::find(known.begin(), known.end(), name);
    if (it == known.end())
      throw UsageError(fmt::format("{}: --variants: unknown '{}' (choose from {})", experiment,
                                   name, fmt::join(known, ",")));
    if (std::any_of(out.begin(), out.end(), [&](const ZooVariant& v) { return v.name == name; }))
      throw UsageError(fmt::format("{}: --variants: '{}' twice", experiment, name));
    out.push_back(all[static_cast<size_t>(it - known.begin())]);
  }
  return out;
}

std::unique_ptr<MixerModel> build_model(const ZooVariant& v,
                                        const Config& cfg,
                                        int64_t vocab,
                                        int64_t t,
                                        int64_t classes,
                                        Generator& gen,
                                        MixerTap* tap) {
  const ZooShape shape{.d_model = cfg.get_int("d_model"),
                       .nhead = cfg.get_int("nhead"),
                       .max_len = t,
                       .layers = cfg.get_int("num_layers")};
  const ZooBody body = zoo_body(v.name);
  return std::make_unique<MixerModel>(
      MixerModelOptions{.vocab = vocab,
                        .max_len = t,
                        .d_model = shape.d_model,
                        .layers = shape.layers,
                        .classes = classes,
                        .ff_mult = body.ff_mult,
                        .positions = body.positions},
      [&](int64_t layer, Generator& g) {
        Mixer m = v.make(shape, layer, g);
        if (tap == nullptr) return m;
        tap->modules.push_back(m.module);
        return Mixer{m.module, [tap, f = m.forward](const Var& x) {
                       if (tap->recording) tap->inputs.push_back(x.value());
                       return f(x);
                     }};
      },
      gen);
}

Trained train_and_eval(const ZooVariant& v,
                       const Config& cfg,
                       const data::Task& task,
                       int64_t steps,
                       uint64_t seed,
                       MixerTap* tap) {
  Generator init(seed), data_gen(seed + 1), eval_gen(seed + 2);
  const int64_t t = task.max_src_len();
  auto m = build_model(v, cfg, task.tokenizer().vocab_size(), t, task.num_classes(), init, tap);
  const train::TrainResult r =
      kit::train_classifier(*m, task, v.name + " on " + task.name(), steps,
                            cfg.get_int("batch_size"), cfg.get_real("lr"), data_gen);
  Trained out{accuracy(*m, task, cfg.get_int("eval_size"), eval_gen),
              1e3 * r.train_seconds / static_cast<double>(steps), nullptr};
  if (tap != nullptr) out.model = std::move(m);
  return out;
}

Accuracies accuracy_part(const Config& cfg,
                         RunContext& ctx,
                         const std::vector<ZooVariant>& vs,
                         const RecallProbe& probe,
                         const std::vector<ZooVariant>& ablations) {
  const data::RecallTask recall({.num_pairs = cfg.get_int("recall_pairs")});
  const std::string mode = cfg.get_string("long_mode");
  const data::LongRangeTask long_range(
      {.mode = mode == "match" ? data::LongRangeMode::kMatch : data::LongRangeMode::kMajority,
       .seq_len = cfg.get_int("long_len")});
  ctx.section(fmt::format(
      "Part 1: accuracy, batch {}, {} held-out examples: recall T = {} after {} steps, {} T = {} "
      "after {} steps",
      cfg.get_int("batch_size"), cfg.get_int("eval_size"), recall.max_src_len(),
      cfg.get_int("recall_steps"), mode, long_range.max_src_len(), cfg.get_int("long_steps")));
  Table t("Held-out accuracy at equal steps (recall chance 0.1, " + mode + " chance 0.5)",
          {"variant", "idea", "causal", "recall", "recall ms/step", mode, mode + " ms/step"});
  // Job i < n trains vs[i] on recall, n + i on the long-range task, 2n + k ablation k on recall:
  // independent runs (each its own generators from the seed), so they train side by side.
  const size_t n = vs.size();
  std::vector<Trained> runs = kit::side_by_side(2 * n + ablations.size(), [&](size_t j) {
    if (j >= n && j < 2 * n)
      return train_and_eval(vs[j - n], cfg, long_range, cfg.get_int("long_steps"),
                            ctx.seed() + 100);
    auto tap = probe && j < n ? std::make_unique<MixerTap>() : nullptr;
    Trained r = train_and_eval(j < n ? vs[j] : ablations[j - 2 * n], cfg, recall,
                               cfg.get_int("recall_steps"), ctx.seed(), tap.get());
    r.tap = std::move(tap);
    return r;
  });
  Accuracies a;
  for (size_t i = 0; i < n; ++i) {
    const ZooVariant& v = vs[i];
    const Trained &r = runs[i], &l = runs[n + i];
    if (probe) probe(i, *r.model, *r.tap, recall);
    a.recall.push_back(r.accuracy);
    a.long_range.push_back(l.accuracy);
    t.add_row({v.name, v.idea, v.causal ? "yes" : "no", fixed(r.accuracy, 3),
               fixed(r.ms_per_step, 1), fixed(l.accuracy, 3), fixed(l.ms_per_step, 1)});
    ctx.result("recall_accuracy_" + v.name, r.accuracy);
    ctx.result("long_accuracy_" + v.name, l.accuracy);
    ctx.result("recall_ms_per_step_" + v.name, r.ms_per_step);
    ctx.result("long_ms_per_step_" + v.name, l.ms_per_step);
  }
  for (size_t k = 0; k < ablations.size(); ++k) a.ablations.push_back(runs[2 * n + k].accuracy);
  ctx.table(t);
  accuracy_figure(cfg, ctx, vs, a);
  return a;
}

Costs cost_part(const Config& cfg, RunContext& ctx, const std::vector<ZooVariant>& vs) {
  const std::vector<int64_t> lengths = cfg.get_ints("lengths");
  const int64_t b = cfg.get_int("time_batch");
  ctx.section(fmt::format(
      "Part 2: one training step (batch {}, majority task), interleaved, and peak memory", b));
  Costs c(vs.size());
  std::vector<std::string> header{"T"};
  for (const ZooVariant& v : vs) header.push_back(v.name + " ms");
  for (const ZooVariant& v : vs) header.push_back(v.name + " MiB");
  Table table(
      "Time per training step (median of interleaved rounds) and peak tensor memory of "
      "one forward + backward",
      header);
  for (int64_t T : lengths) {
    const data::LongRangeTask task({.mode = data::LongRangeMode::kMajority, .seq_len = T});
    Generator gen(ctx.seed() + 7 * static_cast<uint64_t>(T));
    const kit::ClassBatch batch = kit::class_batch(task, b, gen);
    std::vector<std::unique_ptr<MixerModel>> models;
    kit::StepWorks works;
    for (size_t i = 0; i < vs.size(); ++i) {
      Generator init(ctx.seed());
      models.push_back(build_model(vs[i], cfg, task.tokenizer().vocab_size(), T, 2, init));
      works.add(*models[i], batch, vs[i].name + " (timing)");
    }
    c.add(T, works.forward_backward, works.steps, static_cast<int>(cfg.get_int("reps")),
          cfg.get_real("budget_s"));
    std::vector<std::string> row{std::to_string(T)};
    for (size_t i = 0; i < vs.size(); ++i) row.push_back(fixed(c.ms[i].back(), 2));
    for (size_t i = 0; i < vs.size(); ++i) row.push_back(fixed(c.mib[i].back(), 2));
    table.add_row(row);
  }
  ctx.table(table);
  ctx.result("lengths", lengths);
  growth_exponents(c, vs, ctx);
  ctx.result("load_average", load_average());
  ctx.note(
      "The softmax baseline runs the library's fused attention kernel (fast path); the zoo's "
      "layers are written in elementary tape ops (matmul, masked_fill, softmax, gathers), as "
      "their reference path. So the ratios of times mix the algorithm with the kernel; the "
      "growth exponents and the exact memory are what compare the algorithms.");
  ctx.note(fmt::format(
      "1-minute load average after the timing: {:.2f} (other processes slow every variant alike: "
      "the rounds alternate). Memory is exact tensor bytes and does not depend on the load.",
      load_average()));

  kit::step_cost_figures(ctx, c, names_of(vs), b);
  return c;
}

void add_zoo_fields(Config& config) {
  config.add_string("variants", "", "comma-separated variant names (empty: all)")
      .add_int("recall_pairs", 6, "recall: key-value pairs per example (T = 2 pairs + 2)",
               {.min = 1})
      .add_string("long_mode", "majority", "long-range task", {"majority", "match"})
      .add_int("long_len", 64, "long-range task: sequence length", {.min = 8})
      .add_int("recall_steps", 3000, "recall: training steps per variant", {.min = 1})
      .add_int("long_steps", 300, "long-range task: training steps per variant", {.min = 1})
      .add_ints("lengths", {64, 128, 256, 512, 1024}, "lengths T timed and measured")
      .add_int("time_batch", 2, "batch of the timed step", {.min = 1})
      .add_int("reps", 5, "timed rounds per length", {.min = 1})
      .add_real("budget_s", 3.0, "fewer rounds where one round exceeds this (0: none)", {.min = 0});
  add_model_fields(config, {.d_model = 32, .nhead = 2, .num_layers = 2});
  add_optimizer_fields(config, {.batch_size = 32, .lr = 3e-3});  // Adam, constant rate
  add_eval_fields(config, {.eval_size = 500});
}

void check_zoo_fields(const Config& cfg, const std::string& experiment) {
  require_divides(cfg, "nhead", "d_model");
  if ((cfg.get_int("d_model") / cfg.get_int("nhead")) % 2 != 0)
    throw UsageError(fmt::format(
        "{}: --d_model / --nhead must be even (RoPE rotates pairs; PolaFormer splits v in two)",
        experiment));
  kit::require_increasing(cfg, "lengths", experiment, "lengths", 8);
  if (cfg.get_int("recall_pairs") > 26)
    throw UsageError(
        fmt::format("{}: --recall_pairs must be at most 26 (distinct letter keys)", experiment));
}

}  // namespace attn::experiments::zoo
