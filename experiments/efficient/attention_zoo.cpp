// attention-zoo [004 §0x04 4.1]: softmax attention beside the variants that reshape its score
// matrix — Linformer (compress keys and values along T), Reformer (hash, sort, attend within
// chunks), Synthesizer (dense and random: weights without q . k) and dual chunk attention
// (re-indexed RoPE distances) — in one model body, on one recall task and one long-range task,
// with time per training step and peak memory against T.
//
//   attnlab run attention-zoo
//   attnlab run attention-zoo --variants softmax,linformer --lengths 128,256,512,1024
//
// Every variant is a token mixer in experiments/common/mixer_model.h's MixerModel (pre-norm
// blocks, the same feed-forward and read-out), built from zoo_variants.h's list, so the only
// difference between two rows of a table is the mixer. Parts:
//   1. accuracy: each variant trained for --steps on associative recall ("k1 v1 ... ? q" -> the
//      value stored under q, read at the last position) and on a long-range task (majority or
//      match, data/tasks/long_range.h), held-out accuracy;
//   2. cost: one training step (forward, backward, Adam) of every variant at each --lengths T,
//      interleaved so outside load hits all alike, and the exact peak tensor bytes of one
//      forward + backward; growth exponents on log-log axes;
//   3. dual chunk attention's own claim, length: a RoPE character model trained at --rope_train_len
//      read at longer lengths with plain RoPE indices and with DCA's (attention_zoo_dca.cpp).
// Step through: nn::LshAttention::forward (the sort and the chunk masks),
// nn::LinformerAttention::forward, nn::RopeAttention::forward (the three score matrices).
#include "experiments/kit/kit.h"

#include "data/tasks/long_range.h"
#include "data/tasks/recall.h"
#include "experiments/common/zoo_variants.h"
#include "experiments/efficient/attention_zoo_claims.h"
#include "experiments/kit/classifier_steps.h"
#include "experiments/kit/step_costs.h"
#include "nn/attention/lsh_attention.h"

namespace attn::experiments {

namespace {

using zoo::Accuracies, zoo::Costs, zoo::DcaExtrapolation, zoo::dca_part, zoo::index_of;

// Every variant the zoo knows, in report order; last the rows of --plugin files (already
// gradient-checked by experiments/plugin/plugin_loader.h).
std::vector<ZooVariant> all_variants() {
  std::vector<ZooVariant> v = zoo_projection_variants();
  for (ZooVariant& r : zoo_recurrent_variants()) v.push_back(std::move(r));
  for (ZooVariant& r : nn::mixer_registry().plugin_rows()) v.push_back(std::move(r));
  return v;
}

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

// --variants: "" = all, else comma-separated names, each known and given once.
std::vector<ZooVariant> chosen_variants(const Config& cfg) {
  const std::vector<ZooVariant> all = all_variants();
  const std::string text = cfg.get_string("variants");
  if (text.empty()) return all;
  std::vector<std::string> known;
  for (const ZooVariant& v : all) known.push_back(v.name);
  std::vector<ZooVariant> out;
  for (const std::string& name : split_names(text)) {
    const auto it = std::find(known.begin(), known.end(), name);
    if (it == known.end())
      throw UsageError(fmt::format("attention-zoo: --variants: unknown '{}' (choose from {})", name,
                                   fmt::join(known, ",")));
    if (std::any_of(out.begin(), out.end(), [&](const ZooVariant& v) { return v.name == name; }))
      throw UsageError(fmt::format("attention-zoo: --variants: '{}' twice", name));
    out.push_back(all[static_cast<size_t>(it - known.begin())]);
  }
  return out;
}

// ---- part 1: accuracy -------------------------------------------------------------------------

std::unique_ptr<MixerModel> build_model(const ZooVariant& v,
                                        const Config& cfg,
                                        int64_t vocab,
                                        int64_t t,
                                        int64_t classes,
                                        Generator& gen) {
  const ZooShape shape{.d_model = cfg.get_int("d_model"),
                       .nhead = cfg.get_int("nhead"),
                       .max_len = t,
                       .layers = cfg.get_int("num_layers")};
  return std::make_unique<MixerModel>(
      MixerModelOptions{.vocab = vocab,
                        .max_len = t,
                        .d_model = shape.d_model,
                        .layers = shape.layers,
                        .classes = classes},
      [&](int64_t layer, Generator& g) { return v.make(shape, layer, g); }, gen);
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

struct Trained {
  double accuracy = 0, ms_per_step = 0;
};

Trained train_and_eval(
    const ZooVariant& v, const Config& cfg, const data::Task& task, int64_t steps, uint64_t seed) {
  Generator init(seed), data_gen(seed + 1), eval_gen(seed + 2);
  const int64_t t = task.max_src_len();
  auto m = build_model(v, cfg, task.tokenizer().vocab_size(), t, task.num_classes(), init);
  const train::TrainResult r =
      kit::train_classifier(*m, task, v.name + " on " + task.name(), steps,
                            cfg.get_int("batch_size"), cfg.get_real("lr"), data_gen);
  return {accuracy(*m, task, cfg.get_int("eval_size"), eval_gen),
          1e3 * r.train_seconds / static_cast<double>(steps)};
}

// The ablation that tells Reformer's two departures from softmax attention apart: the same
// layer with a chunk as long as the input, so every query sees every key (no buckets), but the
// keys are still the queries.
ZooVariant shared_qk_dense() {
  return {"reformer-one-chunk", "", "", true, [](const ZooShape& s, int64_t, Generator& g) {
            auto m = std::make_shared<nn::LshAttention>(s.d_model, s.nhead, 2, s.max_len, g, true);
            return Mixer{m, [m](const Var& x) { return m->forward(x); }};
          }};
}

Accuracies accuracy_part(const Config& cfg, RunContext& ctx, const std::vector<ZooVariant>& vs) {
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
  Accuracies a;
  for (const ZooVariant& v : vs) {
    const Trained r = train_and_eval(v, cfg, recall, cfg.get_int("recall_steps"), ctx.seed());
    const Trained l =
        train_and_eval(v, cfg, long_range, cfg.get_int("long_steps"), ctx.seed() + 100);
    a.recall.push_back(r.accuracy);
    a.long_range.push_back(l.accuracy);
    t.add_row({v.name, v.idea, v.causal ? "yes" : "no", fixed(r.accuracy, 3),
               fixed(r.ms_per_step, 1), fixed(l.accuracy, 3), fixed(l.ms_per_step, 1)});
    ctx.result("recall_accuracy_" + v.name, r.accuracy);
    ctx.result("long_accuracy_" + v.name, l.accuracy);
    ctx.result("recall_ms_per_step_" + v.name, r.ms_per_step);
    ctx.result("long_ms_per_step_" + v.name, l.ms_per_step);
  }
  ctx.table(t);
  if (index_of(vs, "reformer-lsh") >= 0) {
    a.recall_shared_qk_dense =
        train_and_eval(shared_qk_dense(), cfg, recall, cfg.get_int("recall_steps"), ctx.seed())
            .accuracy;
    ctx.result("recall_accuracy_reformer_one_chunk", a.recall_shared_qk_dense);
    ctx.note(fmt::format(
        "Ablation: Reformer's layer with one chunk as long as the input (every key visible, no "
        "hashing; still shared QK, own position hidden) reaches recall {:.3f}, against {:.3f} "
        "with buckets and {:.3f} for softmax attention.",
        a.recall_shared_qk_dense, a.recall[static_cast<size_t>(index_of(vs, "reformer-lsh"))],
        index_of(vs, "softmax") >= 0 ? a.recall[static_cast<size_t>(index_of(vs, "softmax"))]
                                     : NAN));
  }
  if (const int d = index_of(vs, "dual-chunk"); d >= 0)
    ctx.note(fmt::format(
        "dual-chunk is trained here at lengths within its training length, where DCA's indices "
        "are exactly plain RoPE's (tests/nn/zoo_attention_test.cpp): its accuracies ({:.3f} "
        "recall, {:.3f} {}) are those of RoPE attention in this model and budget. DCA's own "
        "claim, reading longer inputs, is Part 3.",
        a.recall[static_cast<size_t>(d)], a.long_range[static_cast<size_t>(d)], mode));
  std::vector<std::string> names;
  for (const ZooVariant& v : vs) names.push_back(v.name);
  BarChart bars;
  bars.title = fmt::format("Held-out accuracy (recall {} steps, {} {} steps)",
                           cfg.get_int("recall_steps"), mode, cfg.get_int("long_steps"));
  bars.labels = names;
  bars.series = {{"recall", a.recall, ""}, {mode, a.long_range, ""}};
  bars.y_label = "accuracy";
  bars.y_max = 1.0;
  ctx.figure("accuracy", bar_chart_svg(bars), "Accuracy per variant on both tasks");
  return a;
}

// ---- part 2: cost against T --------------------------------------------------------------------

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

  LinePlot pt = kit::line_plot(fmt::format("Time per training step (batch {})", b),
                               "sequence length T", "ms per step (median)", kit::Axes::kLogLog);
  for (size_t i = 0; i < vs.size(); ++i) pt.series.push_back({vs[i].name, c.ts, c.ms[i]});
  ctx.figure("step_time", line_plot_svg(pt), "Time per training step against T, log-log");
  LinePlot pm = kit::line_plot("Peak tensor memory of one forward + backward", "sequence length T",
                               "MiB (exact tensor bytes)", kit::Axes::kLogLog);
  for (size_t i = 0; i < vs.size(); ++i) pm.series.push_back({vs[i].name, c.ts, c.mib[i]});
  ctx.figure("peak_memory", line_plot_svg(pm), "Peak tensor memory against T, log-log");
  return c;
}

void check(const Config& cfg) {
  require_divides(cfg, "nhead", "d_model");
  if ((cfg.get_int("d_model") / cfg.get_int("nhead")) % 2 != 0)
    throw UsageError("attention-zoo: --d_model / --nhead must be even (RoPE rotates pairs)");
  chosen_variants(cfg);  // throws a UsageError for a bad --variants
  const std::vector<int64_t> ts = cfg.get_ints("lengths");
  if (ts.size() < 2 || !std::is_sorted(ts.begin(), ts.end()) ||
      std::adjacent_find(ts.begin(), ts.end()) != ts.end() || ts.front() < 8)
    throw UsageError("attention-zoo: --lengths needs at least two increasing lengths >= 8");
  if (cfg.get_int("recall_pairs") > 26)
    throw UsageError("attention-zoo: --recall_pairs must be at most 26 (distinct letter keys)");
  const std::vector<int64_t> es = cfg.get_ints("rope_eval_lengths");
  if (es.empty() || !std::is_sorted(es.begin(), es.end()))
    throw UsageError("attention-zoo: --rope_eval_lengths needs increasing lengths");
  if (cfg.get_int("rope_train_len") < 4)
    throw UsageError("attention-zoo: --rope_train_len must be at least 4");
}

void run(const Config& cfg, RunContext& ctx) {
  const std::vector<ZooVariant> vs = chosen_variants(cfg);
  std::vector<std::string> names;
  for (const ZooVariant& v : vs) names.push_back(v.name);
  ctx.note(
      fmt::format("Variants: {}. Models: d_model {}, {} heads, {} layers, feed-forward 2 "
                  "d_model, sinusoidal positions, read-out at the last position.",
                  fmt::join(names, ", "), cfg.get_int("d_model"), cfg.get_int("nhead"),
                  cfg.get_int("num_layers")));
  ctx.note(mixer_parameter_note(vs, {cfg.get_int("d_model"), cfg.get_int("nhead"),
                                     cfg.get_int("long_len"), cfg.get_int("num_layers")}));
  const Accuracies a = accuracy_part(cfg, ctx, vs);
  const Costs c = cost_part(cfg, ctx, vs);
  std::unique_ptr<DcaExtrapolation> dca;
  if (index_of(vs, "dual-chunk") >= 0) dca = std::make_unique<DcaExtrapolation>(dca_part(cfg, ctx));
  zoo::compare(ctx, vs, a, c, dca.get(), cfg.get_int("rope_train_len"));
}

}  // namespace

Experiment attention_zoo() {
  Experiment e;
  e.name = "attention-zoo";
  e.source = "004 §0x04 4.1";
  e.purpose =
      "Softmax attention beside Linformer, Reformer LSH, Synthesizer (dense, random), dual chunk, "
      "lightning, a hybrid lightning/softmax stack and a Titans memory: accuracy on recall and a "
      "long-range task, time and memory against T, DCA beyond the training length";
  e.typical_time = "~2-3 min";
  e.config.add_string("variants", "", "comma-separated variant names (empty: all)")
      .add_int("recall_pairs", 6, "recall: key-value pairs per example (T = 2 pairs + 2)",
               {.min = 1})
      .add_string("long_mode", "majority", "long-range task", {"majority", "match"})
      .add_int("long_len", 64, "long-range task: sequence length", {.min = 8})
      .add_int("recall_steps", 3000, "recall: training steps per variant", {.min = 1})
      .add_int("long_steps", 300, "long-range task: training steps per variant", {.min = 1})
      .add_ints("lengths", {64, 128, 256, 512, 1024}, "lengths T timed and measured")
      .add_int("time_batch", 2, "batch of the timed step", {.min = 1})
      .add_int("reps", 5, "timed rounds per length", {.min = 1})
      .add_real("budget_s", 3.0, "fewer rounds where one round exceeds this (0: none)", {.min = 0})
      .add_int("rope_train_len", 32, "part 3: training length of the RoPE model", {.min = 4})
      .add_int("rope_steps", 300, "part 3: training steps", {.min = 1})
      .add_ints("rope_eval_lengths", {32, 128, 256}, "part 3: evaluation lengths", {.min = 4});
  add_model_fields(e.config, {.d_model = 32, .nhead = 2, .num_layers = 2});
  add_optimizer_fields(e.config, {.batch_size = 32, .lr = 3e-3});  // Adam, constant rate
  add_eval_fields(e.config, {.eval_size = 500});
  e.quick = {{"recall_pairs", "4"}, {"recall_steps", "200"}, {"long_len", "32"},
             {"long_steps", "60"},  {"eval_size", "200"},    {"lengths", "64,128,256,512"},
             {"reps", "3"},         {"rope_steps", "150"},   {"rope_eval_lengths", "32,128"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
