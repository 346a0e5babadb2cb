// sparse-challenge [003, Challenge]: sliding-window (banded) attention against full attention
// on long-sequence classification: accuracy, time per training step and memory against T, the
// length where the banded model becomes faster, and the task where it fails.
//
//   attnlab run sparse-challenge
//   attnlab run sparse-challenge --lengths 256,1024,4096 --train_lengths 256,512 --steps 600
//
// Two models with the same parameters (sparse_challenge_model.h): dense uses
// nn::MultiheadAttention (every token sees all T; the fused O(T^2) kernel), banded uses
// nn::SlidingWindowAttention (|i - j| <= window; its fast path is the O(T window)
// banded_attention op, proven equal to the masked dense reference path by
// tests/nn/banded_attention_test.cpp and the layer registry's reference-mode test). A third
// model adds --globals global tokens to the window (Longformer: they see and are seen by every
// position), the challenge's "local neighbourhood plus global summary tokens". With
// --random_links r > 0 that model also reads r random keys per query (BigBird's window + global
// + random, autograd/random_links.h); the default 0 leaves it Longformer's. Each --plugin mixer
// row (sparse_challenge_variants.h) is one more model, trained and timed beside these three in
// every table; the claims stay about the three.
//
// Tasks (data/tasks/long_range.h): majority ('a' more often than 'b': every position counts,
// but each only needs to report itself, so local windows suffice) and match (the characters
// after two '#' markers about T/2 apart are equal: the two must meet in one position, which
// after L layers of window w needs 2 L w >= their distance > T/2; with 4 L w < T banded attention
// cannot see both, and a sum of local pieces cannot compute equality: it stays at chance).
//
// Part 1 trains the models on both tasks at --train_lengths (training at 4096 on 2 cores takes
// too long for a default run: the timing part measures the cost there instead). Part 2 times one
// training step (forward, backward, Adam) of each model at every --lengths T, the three
// interleaved (a, b, c, a, b, c, ...) so outside load hits all alike, and measures the exact peak
// tensor bytes of one forward + backward.
#include <span>

#include "data/tasks/long_range.h"
#include "experiments/efficient/sparse_challenge_variants.h"
#include "experiments/kit/classifier_steps.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/spread.h"
#include "experiments/kit/step_costs.h"

namespace attn::experiments {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
using sparse::kBanded, sparse::kDense, sparse::kGlobal, sparse::Trained, sparse::Variant;

void check(const Config& cfg) {
  require_divides(cfg, "nhead", "d_model");
  for (const char* f : {"lengths", "train_lengths"}) {
    const std::vector<int64_t> ts = cfg.get_ints(f);
    if (ts.empty() || !std::is_sorted(ts.begin(), ts.end()) ||
        std::adjacent_find(ts.begin(), ts.end()) != ts.end())
      throw UsageError(fmt::format("sparse-challenge: --{} needs increasing lengths", f));
    for (int64_t t : ts)
      if (t < 16)
        throw UsageError(
            fmt::format("sparse-challenge: --{} values must be at least 16, got {}", f, t));
  }
  if (cfg.get_ints("lengths").size() < 2)
    throw UsageError("sparse-challenge: --lengths needs at least two lengths");
}

// Accuracy (or training ms per step) by model, then by training length: [variant][T].
using Accuracies = std::vector<std::vector<double>>;

// The challenge's two accuracy questions as rows, from part 1's accuracies by task [model][T]:
// does the local scheme match full attention (majority), and where does it fail (match)? Both
// read two standard errors of an accuracy on n held-out examples as the noise.
void accuracy_rows(const Config& cfg,
                   const std::map<std::string, Accuracies>& acc,
                   RunContext& ctx) {
  const auto n = static_cast<double>(cfg.get_int("eval_size"));
  const std::vector<int64_t> ts = cfg.get_ints("train_lengths");
  const int64_t reach = 4 * cfg.get_int("num_layers") * cfg.get_int("window");
  const auto& majority = acc.at("majority");
  const auto& match = acc.at("match");
  bool matches = true, dense_learned = true, at_chance = true, any_blind = false;
  double widest = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    const double gap = std::fabs(majority[kBanded][i] - majority[kDense][i]);
    widest = std::max(widest, gap);
    matches =
        matches && gap <= 2 * kit::rate_difference_se(majority[kBanded][i], majority[kDense][i], n);
    dense_learned = dense_learned && majority[kDense][i] >= 0.9;
    if (reach >= ts[i]) continue;  // the window can still bring the two markers together
    any_blind = true;
    at_chance = at_chance && std::fabs(match[kBanded][i] - 0.5) <= 2 * std::sqrt(0.25 / n);
  }
  DocumentComparison cmp("003 Challenge: accuracy");
  cmp.add_exact("banded attention matches full attention's accuracy (majority, every T)", "yes",
                kit::yes_no(matches),
                fmt::format("largest gap {:.3f}; banded {:.3f}, dense {:.3f}", widest,
                            fmt::join(majority[kBanded], ", "), fmt::join(majority[kDense], ", ")))
      .not_judged_if(!dense_learned, "full attention did not learn majority (below 0.9)");
  cmp.add_exact("where 4 L w < T, banded attention fails on match (chance)", "yes",
                kit::yes_no(at_chance),
                fmt::format("banded on match: {:.3f} at T = {} (4 L w = {}; chance 0.5 within 2 "
                            "standard errors)",
                            fmt::join(match[kBanded], ", "), fmt::join(ts, ", "), reach))
      .not_judged_if(!any_blind, "no training length has 4 L w < T");
  ctx.compare(cmp);
}

// Every variant's run on `mode` at each training length, runs[i * variants + m] for length i and
// variant m: a table row per length, the results and the summary line; returns the accuracies
// [variant][T].
Accuracies train_all(const Config& cfg,
                     RunContext& ctx,
                     const std::vector<Variant>& vs,
                     const std::string& mode,
                     std::span<const Trained> runs,
                     Table& t,
                     std::vector<std::string>& lines) {
  const std::vector<int64_t> ts = cfg.get_ints("train_lengths");
  const int64_t reach = 4 * cfg.get_int("num_layers") * cfg.get_int("window");
  Accuracies acc(vs.size()), ms(vs.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    for (size_t m = 0; m < vs.size(); ++m) {
      acc[m].push_back(runs[i * vs.size() + m].accuracy);
      ms[m].push_back(runs[i * vs.size() + m].ms_per_step);
    }
    std::vector<std::string> row{mode, std::to_string(ts[i])};
    for (const auto& a : acc) row.push_back(fixed(a.back(), 3));
    for (const auto& m : ms) row.push_back(fixed(m.back(), 1));
    row.push_back(reach < ts[i] ? "yes" : "no");
    t.add_row(row);
  }
  std::vector<std::string> parts;
  for (size_t m = 0; m < vs.size(); ++m) {
    ctx.result(fmt::format("{}_accuracy_{}", mode, vs[m].key), acc[m]);
    ctx.result(fmt::format("{}_train_ms_per_step_{}", mode, vs[m].key), ms[m]);
    parts.push_back(fmt::format("{} {:.3f}", vs[m].label, fmt::join(acc[m], ", ")));
  }
  lines.push_back(
      fmt::format("{}: {} (T = {}).", mode, fmt::join(parts, ", "), fmt::join(ts, ", ")));
  return acc;
}

void accuracy_part(const Config& cfg, RunContext& ctx, const std::vector<Variant>& vs) {
  const std::vector<int64_t> ts = cfg.get_ints("train_lengths");
  const int64_t w = cfg.get_int("window"), layers = cfg.get_int("num_layers");
  ctx.section(fmt::format("Part 1: accuracy after {} steps of batch {} ({} held-out examples)",
                          cfg.get_int("steps"), cfg.get_int("batch_size"),
                          cfg.get_int("eval_size")));
  std::vector<std::string> header{"task", "T"};
  for (const Variant& v : vs) header.push_back(v.label);
  for (const Variant& v : vs) header.push_back(v.label + " ms/step");
  header.push_back("4 L w < T?");
  Table t("Held-out accuracy (chance 0.5) and training time per step", header);
  std::vector<std::string> lines;
  std::map<std::string, Accuracies> by_task;
  const std::vector<std::string> modes{"majority", "match"};
  const size_t nv = vs.size(), runs_per_mode = ts.size() * nv;
  // Run j is modes[j / runs_per_mode] at ts[(j / nv) % |ts|] for vs[j % nv]: independent
  // trainings (each its own generators from the seed), so they train side by side.
  const std::vector<Trained> runs = kit::side_by_side(2 * runs_per_mode, [&](size_t j) {
    const int64_t T = ts[(j / nv) % ts.size()];
    return sparse::train_and_eval(cfg, vs[j % nv], j % nv, modes[j / runs_per_mode], T,
                                  ctx.seed() + 1000 * T);
  });
  for (size_t k = 0; k < modes.size(); ++k) {
    const std::string& mode = modes[k];
    const Accuracies& acc = by_task[mode] = train_all(
        cfg, ctx, vs, mode, std::span(runs).subspan(k * runs_per_mode, runs_per_mode), t, lines);
    if (mode == "match" && *std::max_element(acc[kDense].begin(), acc[kDense].end()) < 0.6)
      lines.push_back(
          "Dense attention did not learn match within this budget either (below 0.6): it must "
          "first learn, from the positions alone, which token follows a marker, and then pair two "
          "tokens T/2 apart — far more steps than a short run gives. So on match the measured "
          "accuracies do not separate the two; the banded model's failure is structural (below), "
          "the dense model's is a matter of training.");
  }
  ctx.table(t);
  ctx.result("train_lengths", ts);
  for (const std::string& l : lines) ctx.note(l);
  ctx.note(fmt::format(
      "With {} layers of window {}, a position has seen at most {} tokens on each side. The match "
      "markers are more than T/2 apart, so where 4 L w < T no position sees both characters and "
      "the banded model can only guess: this is where a purely local scheme fails, whatever its "
      "speed. Majority needs every position but no pairing, so the mean of local summaries is "
      "enough. Global tokens remove the barrier: every pair of positions is two hops apart "
      "(token -> global token -> token), so whether the third model learns match is, as for "
      "dense attention, a question of training.",
      layers, w, layers * w));
  accuracy_rows(cfg, by_task, ctx);
}

using Measured = kit::StepCosts;

Measured timing_part(const Config& cfg, RunContext& ctx, const std::vector<Variant>& vs) {
  const std::vector<int64_t> lengths = cfg.get_ints("lengths");
  const int64_t b = cfg.get_int("time_batch");
  ctx.section(fmt::format("Part 2: one training step (batch {}), interleaved, and peak memory", b));
  Measured r(vs.size());
  std::vector<std::string> header{"T"}, csv_header{"T"};
  for (const Variant& v : vs) header.push_back(v.label + " ms");
  header.push_back("dense / banded");
  for (const Variant& v : vs) header.push_back(v.label + " MiB");
  for (const char* column : {"_ms", "_min_ms", "_bytes"})
    for (const Variant& v : vs) csv_header.push_back(v.key + column);
  Table t(
      "Time per training step (median of the interleaved rounds) and peak tensor memory of "
      "one forward + backward",
      header);
  CsvWriter csv = ctx.csv("timing", csv_header);
  for (int64_t T : lengths) {
    const data::LongRangeTask task = sparse::make_task("majority", T);
    Generator gen(ctx.seed() + 7 * T);
    const kit::ClassBatch batch = kit::class_batch(task, b, gen);
    std::vector<std::unique_ptr<LongRangeClassifier>> ms;
    kit::StepWorks works;
    for (size_t m = 0; m < vs.size(); ++m) {
      Generator init(ctx.seed());
      ms.push_back(std::make_unique<LongRangeClassifier>(
          sparse::model_options(cfg, vs[m], m, task.tokenizer().vocab_size(), T, ctx.seed()),
          init));
      works.add(*ms[m], batch, fmt::format("model {} T = {} (timing)", m, T));
    }
    r.add(T, works.forward_backward, works.steps, static_cast<int>(cfg.get_int("reps")),
          cfg.get_real("budget_s"));
    std::vector<std::string> row{std::to_string(T)};
    std::vector<double> csv_row{static_cast<double>(T)};
    for (size_t m = 0; m < vs.size(); ++m) row.push_back(fixed(r.ms[m].back(), 2));
    row.push_back(fixed(r.ms[kDense].back() / r.ms[kBanded].back(), 2));
    for (size_t m = 0; m < vs.size(); ++m) row.push_back(fixed(r.mib[m].back(), 2));
    for (const auto* series : {&r.ms, &r.min_ms})
      for (const auto& s : *series) csv_row.push_back(s.back());
    for (const auto& s : r.mib) csv_row.push_back(s.back() * kMiB);
    t.add_row(row);
    csv.row(csv_row);
  }
  ctx.table(t);
  ctx.result("lengths", lengths);
  for (size_t m = 0; m < vs.size(); ++m) {
    ctx.result(fmt::format("step_ms_{}", vs[m].key), r.ms[m]);
    ctx.result(fmt::format("step_min_ms_{}", vs[m].key), r.min_ms[m]);
    ctx.result(fmt::format("peak_tensor_mib_{}", vs[m].key), r.mib[m]);
  }
  ctx.result("load_average", load_average());
  return r;
}

// The T from which ratio stays >= 1 up to the longest length: the crossing after the last
// length where it is below 1, interpolated on log axes (a noisy ratio near 1 at short T may
// cross several times; this is the one that lasts). NaN when it is >= 1 everywhere (the
// crossover lies below the first length) or below 1 at the longest.
double stays_above_one_from(const std::vector<double>& ts, const std::vector<double>& ratio) {
  size_t last_below = ratio.size();
  for (size_t i = 0; i < ratio.size(); ++i)
    if (ratio[i] < 1) last_below = i;
  if (last_below == ratio.size() || last_below + 1 == ratio.size()) return NAN;
  return log_log_crossing({ts[last_below], ts[last_below + 1]},
                          {ratio[last_below], ratio[last_below + 1]});
}

std::string describe_crossover(double x, const Measured& r, const std::vector<double>& ratio) {
  if (!std::isnan(x)) return fmt::format("{:.0f}", x);
  return ratio.back() >= 1 ? fmt::format("<= {:.0f}", r.ts.front())
                           : fmt::format("> {:.0f}", r.ts.back());
}

void summary(const Config& cfg,
             RunContext& ctx,
             const std::vector<Variant>& vs,
             const Measured& r) {
  std::vector<double> ratio, mem_ratio;
  for (size_t i = 0; i < r.ts.size(); ++i) {
    ratio.push_back(r.ms[1][i] / r.ms[0][i]);
    mem_ratio.push_back(r.mib[1][i] / r.mib[0][i]);
  }
  const double crossover = stays_above_one_from(r.ts, ratio);
  // The growth exponents over the three longest lengths (where the T^2 or T term dominates).
  const double from = r.slope_from();
  std::vector<double> slope_mem, slope_time;  // [variant]
  for (size_t m = 0; m < vs.size(); ++m) {
    slope_mem.push_back(log_log_slope(r.ts, r.mib[m], from));
    slope_time.push_back(log_log_slope(r.ts, r.ms[m], from));
  }
  ctx.result("step_ratio_dense_over_banded", ratio);
  ctx.result("memory_ratio_dense_over_banded", mem_ratio);
  ctx.result("crossover_T",
             std::isnan(crossover) ? nlohmann::ordered_json() : nlohmann::ordered_json(crossover));
  ctx.result("crossover_text", describe_crossover(crossover, r, ratio));
  ctx.result("banded_faster_at_longest", ratio.back() > 1);
  for (size_t m = 0; m < vs.size(); ++m) ctx.result("memory_slope_" + vs[m].key, slope_mem[m]);
  // The third model's time exponent is not reported: the note and the rows compare two.
  for (size_t m = 0; m < vs.size(); ++m)
    if (m != kGlobal) ctx.result("time_slope_" + vs[m].key, slope_time[m]);
  ctx.note(fmt::format(
      "Crossover (from this T on, dense / banded time per step stays above 1; interpolated on "
      "log axes): T = {}. "
      "From T = {:.0f} up, memory grows like T^{:.2f} (banded) and T^{:.2f} (dense); time like "
      "T^{:.2f} and T^{:.2f}. At T = {:.0f} the banded step takes {:.3g} ms against {:.3g} ms "
      "(x{:.2f}) and {:.3g} MiB of tensors against {:.3g} MiB (x{:.1f}). 1-minute load average "
      "after the timing: {:.2f} (other processes slow both models alike: the rounds alternate).",
      describe_crossover(crossover, r, ratio), from, slope_mem[0], slope_mem[1], slope_time[0],
      slope_time[1], r.ts.back(), r.ms[0].back(), r.ms[1].back(), ratio.back(), r.mib[0].back(),
      r.mib[1].back(), mem_ratio.back(), load_average()));

  // The challenge asks questions rather than giving numbers; its premises are checkable.
  DocumentComparison cmp("003 Challenge vs ours");
  cmp.add("dense attention memory ~ T^2 (exponent)", 2.0, slope_mem[kDense], 0.35,
          "exponent over the three longest lengths; the T-linear activations pull it below 2", 2);
  cmp.add("a local + sparse scheme: near-linear memory (exponent)", 1.0, slope_mem[kBanded], 0.2,
          "", 2);
  cmp.add(cfg.get_int("random_links") > 0
              ? "local + global summary tokens + random links: near-linear memory (exponent)"
              : "local + global summary tokens: near-linear memory (exponent)",
          1.0, slope_mem[kGlobal], 0.2, "", 2);
  cmp.add_exact("the sparse scheme gets faster than full attention at long T", "yes",
                ratio.back() > 1 ? "yes" : "no",
                ratio.back() > 1 ? "" : "not within the measured lengths: try longer --lengths");
  ctx.compare(cmp);

  sparse::plugin_cost_notes(ctx, vs, r, slope_mem, slope_time);
  std::vector<std::string> labels{"banded (window)", "dense (full)"};
  for (size_t m = kGlobal; m < vs.size(); ++m) labels.push_back(vs[m].label);
  kit::step_cost_figures(ctx, r, labels, cfg.get_int("time_batch"));
}

void run(const Config& cfg, RunContext& ctx) {
  ctx.note(fmt::format("Models: d_model {}, {} heads, {} layers, window {} (banded).",
                       cfg.get_int("d_model"), cfg.get_int("nhead"), cfg.get_int("num_layers"),
                       cfg.get_int("window")));
  ctx.result("random_links", cfg.get_int("random_links"));
  if (cfg.get_int("random_links") > 0)
    ctx.note(fmt::format(
        "Third model: the window, {} global tokens and {} random keys per query (BigBird), drawn "
        "once per layer and length (layer l from seed + l) among the keys a query does not "
        "otherwise read; one step along a random link can jump anywhere in the sequence, so the "
        "model can pair distant tokens directly as well as through the global tokens.",
        cfg.get_int("globals"), cfg.get_int("random_links")));
  if (reference_mode())
    ctx.note(
        "Reference path (a Debug build's default, or --reference): the banded layers run as the "
        "textbook masked dense attention over the full (T,T) score matrix, so Part 2 measures "
        "O(T^2) memory and time for every model. Run with --fast for the banded_attention op.");
  const std::vector<Variant> vs = sparse::variants(cfg);
  for (size_t m = sparse::kBuiltIns; m < vs.size(); ++m)
    ctx.note(fmt::format(
        "Plugin mixer '{}' ({}, {}) is trained and timed beside the built-ins, as the attention "
        "of the same classifier; it enters no claim.",
        vs[m].key, vs[m].plugin->origin, vs[m].plugin->causal ? "causal" : "not causal"));
  accuracy_part(cfg, ctx, vs);
  summary(cfg, ctx, vs, timing_part(cfg, ctx, vs));
}

}  // namespace

Experiment sparse_challenge() {
  Experiment e;
  e.name = "sparse-challenge";
  e.source = "003 Challenge";
  e.purpose =
      "Sliding-window (banded) vs full attention on long-range classification: accuracy, time "
      "per step and memory against T, the crossover length, where the local scheme fails";
  e.nondeterministic = {"finds where the sparse scheme becomes faster from measured step times",
                        {"^crossover_", "^step_ratio_", "^banded_faster", "gets faster"}};
  e.config
      .add_ints("lengths", {32, 64, 128, 256, 512, 1024, 2048, 4096},
                "lengths T timed and measured")
      .add_ints("train_lengths", {256}, "lengths T at which both models are trained")
      .add_int("window", 16, "banded: each token sees |i - j| <= window", {.min = 0})
      .add_int("globals", 2, "global tokens of the third model, at 0, T/g, 2T/g, ...", {.min = 1})
      .add_int("random_links", 0,
               "random keys per query of the third model (BigBird; 0: window + globals only)",
               {.min = 0})
      .add_int("time_batch", 2, "batch of the timed step", {.min = 1})
      .add_int("reps", 7, "timed rounds per length", {.min = 1})
      .add_real("budget_s", 4.0, "fewer rounds where one round exceeds this (0: none)", {.min = 0});
  add_model_fields(e.config, {.d_model = 32, .nhead = 2, .num_layers = 2});
  add_optimizer_fields(e.config, {.steps = 400, .batch_size = 32, .lr = 3e-3});  // Adam, constant
  add_eval_fields(e.config, {.eval_size = 500});
  e.quick = {{"lengths", "32,64,128,256,512,1024"},
             {"train_lengths", "64"},
             {"window", "4"},
             {"steps", "120"},
             {"eval_size", "300"},
             {"reps", "3"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
