// triangle-tradeoff [000 §9.6]: softmax attention, linear attention, a selective SSM (S6) and
// sliding-window attention in one body, measured on the three corners of the document's
// triangle — cheap parallel training, constant memory per generated token, precise recall.
//
//   attnlab run triangle-tradeoff
//   attnlab run triangle-tradeoff --lengths 128,512,2048 --window 8 --steps 3000
//
// Every model is experiments/common/mixer_model.h's MixerModel (pre-norm blocks, equal width,
// depth, feed-forward and read-out, causal); only the token mixer differs.
//   Part 1 times one training step (forward + backward) against T, the models interleaved
//     (a, b, c, d, a, b, ...) so outside load hits all alike, and fits growth exponents on
//     log-log axes; it also records the exact peak tensor bytes of that step.
//   Part 2 decodes one token at a time through a stack of each mixer and weighs the state it
//     keeps between steps (experiments/common/decoding_state.h), next to the closed forms.
//   Part 3 trains each model on associative recall ("k1 v1 ... kn vn ? q" -> the value stored
//     under q, read at the last position), the same steps and data, and measures held-out
//     accuracy. A causal window w over L layers lets the last position depend on the last L w
//     inputs only, so pairs further back are invisible: recall_ceiling() gives the best accuracy
//     such a model can reach, which a window shorter than the pairs' span keeps far below 1.
#include "experiments/kit/kit.h"

#include "data/tasks/recall.h"
#include "experiments/common/decoding_state.h"
#include "experiments/common/mixer_model.h"
#include "experiments/common/ssm_mixer.h"
#include "experiments/efficient/triangle_tradeoff_claims.h"
#include "experiments/kit/classifier_steps.h"
#include "experiments/kit/require_increasing.h"
#include "experiments/kit/step_costs.h"
#include "nn/mixer/mixer_registry.h"

namespace attn::experiments {

namespace {

using triangle::Decoded, triangle::Kind, triangle::kNoDecoding, triangle::Recalled,
    triangle::s6_options, triangle::Timed;

// The built-ins, then each causal plugin row (a non-causal one is left out with a note: the
// recall read-out at the last position and the decoding both need t to read positions <= t).
std::vector<Kind> kinds(const Config& cfg, RunContext& ctx) {
  const int64_t d = cfg.get_int("d_model"), h = cfg.get_int("nhead"), w = cfg.get_int("window"),
                n = cfg.get_int("d_state"), layers = cfg.get_int("num_layers");
  const S6MixerOptions s6 = s6_options(cfg);
  std::vector<Kind> ks = {
      {"softmax", [=](int64_t, int64_t, Generator& g) { return softmax_mixer(d, h, true, g); }},
      {"linear", [=](int64_t, int64_t, Generator& g) { return linear_mixer(d, h, true, g); }},
      {"S6", [=](int64_t, int64_t, Generator& g) { return s6_mixer(d, n, g, s6); }},
      {"window", [=](int64_t, int64_t, Generator& g) { return window_mixer(d, h, w, true, g); }},
  };
  for (const nn::MixerRow& row : nn::mixer_registry().plugin_rows()) {
    if (!row.causal) {
      ctx.note(fmt::format(
          "Plugin mixer '{}' ({}) is left out: it is not causal, and every model here must be "
          "(recall is read at the last position, decoding generates left to right).",
          row.name, row.origin));
      continue;
    }
    ks.push_back(
        {row.name,
         [=](int64_t max_len, int64_t layer, Generator& g) {
           return row.make(
               {.d_model = d, .nhead = h, .max_len = max_len, .layers = layers, .window = w}, layer,
               g);
         },
         row.origin});
    ctx.note(fmt::format(
        "Plugin mixer '{}' ({}) runs beside the built-ins in Parts 1 and 3; it has no decoding "
        "state interface (Part 2) and enters no claim.",
        row.name, row.origin));
  }
  return ks;
}

MixerModelOptions model_options(const Config& cfg, int64_t vocab, int64_t max_len) {
  return {.vocab = vocab,
          .max_len = max_len,
          .d_model = cfg.get_int("d_model"),
          .layers = cfg.get_int("num_layers"),
          .classes = vocab};
}

// forward + cross-entropy + backward: the part of a training step that depends on T.
void forward_backward(MixerModel& m, const kit::ClassBatch& b) {
  m.zero_grad();
  cross_entropy(m.forward(b.ids), b.labels).backward();
}

// ---- Part 1: time and peak memory of a training step against T ----

// Where softmax's step becomes the slower one (softmax / other passes 1, log axes), if it does.
void softmax_crossings(const kit::StepCosts& r, const std::vector<Kind>& ks, RunContext& ctx) {
  std::vector<std::string> crossings;
  for (size_t i = 1; i < ks.size(); ++i) {
    std::vector<double> ratio;
    for (size_t j = 0; j < r.ts.size(); ++j) ratio.push_back(r.min_ms[0][j] / r.min_ms[i][j]);
    const double x = ratio.front() >= 1 ? r.ts.front() : log_log_crossing(r.ts, ratio);
    ctx.result("softmax_slower_from_T_" + ks[i].name, finite_or_null(x));
    crossings.push_back(std::isnan(x)
                            ? fmt::format("{}: not below T = {:.0f}", ks[i].name, r.ts.back())
                            : fmt::format("{}: T = {:.0f}", ks[i].name, x));
  }
  ctx.note(
      fmt::format("Softmax's step becomes slower than the other model's from (interpolated "
                  "on log axes; the first length when it is slower from the start): {}.",
                  fmt::join(crossings, "; ")));
}

Timed timing_part(const Config& cfg, RunContext& ctx, const std::vector<Kind>& ks) {
  const std::vector<int64_t> lengths = cfg.get_ints("lengths");
  const int64_t b = cfg.get_int("time_batch"), vocab = 16;
  const size_t n = ks.size();
  // One thread by default: a parallel region waits for its slowest thread, so on a shared
  // machine every burst of outside load on the other core would stall it; one thread measures the
  // work's growth with T, which is the question (the document's exponents count operations).
  const auto threads = static_cast<int>(cfg.get_int("time_threads"));
  ScopedThreads scoped(threads);
  ctx.section(fmt::format(
      "Part 1: one training step (forward + backward, batch {}) against T, interleaved, {}", b,
      threads == 0 ? "the run's threads" : fmt::format("{} thread(s)", threads)));
  Timed r(n);
  std::vector<std::string> header{"T"};
  for (const Kind& k : ks) header.push_back(k.name + " ms (min)");
  for (const Kind& k : ks) header.push_back(k.name + " MiB");
  Table t("Time per step, median (min) of the rounds, and exact peak tensor memory", header);
  for (int64_t T : lengths) {
    Generator gen(ctx.seed() + static_cast<uint64_t>(T));
    kit::ClassBatch batch{Tensor({b, T}), Tensor({b})};
    for (int64_t i = 0; i < b * T; ++i) batch.ids[i] = static_cast<real>(gen.randint(vocab));
    for (int64_t i = 0; i < b; ++i) batch.labels[i] = static_cast<real>(gen.randint(vocab));
    std::vector<std::unique_ptr<MixerModel>> models;
    std::vector<std::function<void()>> works;
    for (const Kind& k : ks) {
      Generator init(ctx.seed());
      models.push_back(
          std::make_unique<MixerModel>(model_options(cfg, vocab, T), k.at_length(T), init));
      MixerModel* m = models.back().get();
      works.push_back([m, &batch] { forward_backward(*m, batch); });
    }
    r.add(T, works, works, static_cast<int>(cfg.get_int("reps")), cfg.get_real("budget_s"));
    std::vector<std::string> row{std::to_string(T)};
    for (size_t i = 0; i < n; ++i)
      row.push_back(fmt::format("{:.2f} ({:.2f})", r.ms[i].back(), r.min_ms[i].back()));
    for (size_t i = 0; i < n; ++i) row.push_back(fixed(r.mib[i].back(), 2));
    t.add_row(row);
  }
  ctx.table(t);
  // Exponents over the three longest lengths, where the leading term dominates most, fitted on
  // each length's least disturbed round: on a shared machine outside load only adds time, so the
  // minimum is the closest to the work's own cost (the median is reported beside it).
  const double from = r.slope_from();
  ctx.result("lengths", lengths);
  for (size_t i = 0; i < n; ++i) {
    r.time_slope.push_back(log_log_slope(r.ts, r.min_ms[i], from));
    r.memory_slope.push_back(log_log_slope(r.ts, r.mib[i], from));
    ctx.result("step_ms_" + ks[i].name, r.ms[i]);
    ctx.result("step_min_ms_" + ks[i].name, r.min_ms[i]);
    ctx.result("peak_tensor_mib_" + ks[i].name, r.mib[i]);
    ctx.result("time_slope_" + ks[i].name, r.time_slope[i]);
    ctx.result("memory_slope_" + ks[i].name, r.memory_slope[i]);
  }
  ctx.result("slope_from_T", from);
  ctx.result("load_average", load_average());
  std::vector<std::string> parts;
  for (size_t i = 0; i < n; ++i)
    parts.push_back(fmt::format("{} T^{:.2f} (memory T^{:.2f})", ks[i].name, r.time_slope[i],
                                r.memory_slope[i]));
  ctx.note(
      fmt::format("From T = {:.0f} up (fitted on the fastest round of each length), time per step "
                  "grows like: {}. 1-minute load average after the timing: "
                  "{:.2f} (the rounds alternate, so load slows every model alike).",
                  from, fmt::join(parts, ", "), load_average()));
  softmax_crossings(r, ks, ctx);

  LinePlot p =
      kit::line_plot(fmt::format("Training step (forward + backward, batch {})", b),
                     "sequence length T", "ms per step (fastest round)", kit::Axes::kLogLog);
  for (size_t i = 0; i < n; ++i) p.series.push_back({ks[i].name, r.ts, r.min_ms[i]});
  ctx.figure("step_time", line_plot_svg(p), "Time per training step against T, log-log");
  return r;
}

// ---- Part 2: the decoding state ----

Decoded decoding_part(const Config& cfg, RunContext& ctx, const std::vector<Kind>& ks) {
  const int64_t d = cfg.get_int("d_model"), h = cfg.get_int("nhead"), w = cfg.get_int("window"),
                layers = cfg.get_int("num_layers"), steps = cfg.get_int("decode_steps");
  ctx.section(fmt::format(
      "Part 2: decoding {} tokens one at a time; bytes each model keeps between steps", steps));
  const int64_t n = cfg.get_int("d_state");
  const S6MixerOptions s6 = s6_options(cfg);
  Decoded r;
  std::vector<std::string> forms;
  for (const Kind& k : ks) {
    if (k.plugin()) continue;  // the built-ins come first: r's rows are ks[0 .. built-ins)
    Generator gen(ctx.seed() + 17);
    DecodingTrace tr;
    std::vector<int64_t> closed;
    if (k.name == "softmax") {
      tr = decode_softmax(d, h, layers, steps, gen);
      for (int64_t t = 1; t <= steps; ++t) closed.push_back(softmax_state_bytes(d, layers, t));
      forms.push_back(fmt::format("2 L d t 4 = {} t", 2 * layers * d * 4));
    } else if (k.name == "window") {
      tr = decode_window(d, h, w, layers, steps, gen);
      for (int64_t t = 1; t <= steps; ++t) closed.push_back(window_state_bytes(d, w, layers, t));
      forms.push_back(fmt::format("2 L d min(t, w) 4 = {} min(t, {})", 2 * layers * d * 4, w));
    } else if (k.name == "linear") {
      tr = decode_linear(d, h, layers, steps, gen);
      closed.assign(static_cast<size_t>(steps), linear_state_bytes(d, h, layers));
      forms.push_back(fmt::format("L H (D^2 + D) 4 = {}", closed.back()));
    } else if (k.name == "S6") {
      tr = decode_s6(d, n, s6, layers, steps, gen);
      closed.assign(static_cast<size_t>(steps), layers * s6_state_bytes(d, n, s6));
      forms.push_back(fmt::format("L (E N + (d_conv - 1) E) 4 = {}", closed.back()));
    } else {
      throw Error("triangle-tradeoff: no decoder for " + k.name);
    }
    r.measured.push_back(tr.state_bytes);
    r.closed.push_back(closed);
    r.max_abs_diff.push_back(tr.max_abs_diff);
  }
  Table t("State bytes after t generated tokens (measured from the state tensors | closed form)",
          {"model", "t = 1", fmt::format("t = {}", steps / 2), fmt::format("t = {}", steps),
           "closed form at t", "bytes per extra token", "decoded vs parallel max |diff|"});
  for (size_t i = 0; i < r.measured.size(); ++i) {
    const auto& m = r.measured[i];
    t.add_row({ks[i].name, std::to_string(m[0]), std::to_string(m[steps / 2 - 1]),
               std::to_string(m[steps - 1]), forms[i],
               fixed(triangle::bytes_per_token(m, steps), 1),
               fmt::format("{:.1e}", r.max_abs_diff[i])});
    ctx.result("state_bytes_" + ks[i].name, m);
    ctx.result("state_bytes_closed_" + ks[i].name, r.closed[i]);
    ctx.result("decode_max_abs_diff_" + ks[i].name, r.max_abs_diff[i]);
  }
  for (size_t i = r.measured.size(); i < ks.size(); ++i)
    t.add_row({ks[i].name, "-", "-", "-", kNoDecoding, "-", "-"});
  ctx.table(t);
  ctx.note(fmt::format(
      "Each row decodes a stack of {} freshly initialised mixers (d = {}, {} heads, window {}; "
      "S6 with E = {} channels, N = {}) with B = 1; the last column compares every decoded "
      "output with the parallel (training) form of the same stack, so the states weighed are the "
      "ones the models compute with.",
      layers, d, h, w, s6.expand * d, n));

  // Log y: the KV cache outgrows the fixed states by orders of magnitude.
  LinePlot p = kit::line_plot("Decoding state kept between steps", "generated position t",
                              "bytes (all layers), log scale", kit::Axes::kLogY);
  std::vector<double> xs;
  for (int64_t t = 1; t <= steps; ++t) xs.push_back(static_cast<double>(t));
  for (size_t i = 0; i < r.measured.size(); ++i) {
    std::vector<double> ys(r.measured[i].begin(), r.measured[i].end());
    p.series.push_back({ks[i].name, xs, ys, "", false, false});
  }
  ctx.figure("state_bytes", line_plot_svg(p), "Decoding state bytes against generated position");
  return r;
}

// ---- Part 3: associative recall ----

// The best accuracy a causal model can reach when its last position depends on the last `reach`
// inputs only: pair i (key at 2i, value at 2i + 1, query at 2n + 1) is visible when
// 2n + 1 - 2i <= reach; an invisible pair's value is a uniform guess among `values`.
double recall_ceiling(int64_t pairs, int64_t reach, int64_t values) {
  int64_t visible = 0;
  for (int64_t i = 0; i < pairs; ++i) visible += 2 * pairs + 1 - 2 * i <= reach;
  const double v = static_cast<double>(visible) / static_cast<double>(pairs);
  return v + (1 - v) / static_cast<double>(values);
}

Recalled recall_part(const Config& cfg, RunContext& ctx, const std::vector<Kind>& ks) {
  const int64_t pairs = cfg.get_int("pairs"), steps = cfg.get_int("steps"),
                batch = cfg.get_int("batch_size"), layers = cfg.get_int("num_layers"),
                w = cfg.get_int("window");
  const data::RecallTask task({.num_pairs = pairs});
  const int64_t values = 10;  // RecallTask's default value alphabet, 0..9
  ctx.section(fmt::format("Part 3: associative recall, {} pairs (T = {}), {} steps of batch {}",
                          pairs, task.max_src_len(), steps, batch));
  Recalled r;
  r.chance = 1.0 / static_cast<double>(values);
  r.window_ceiling = recall_ceiling(pairs, layers * w, values);
  Generator eval_gen(ctx.seed() + 2);
  const std::vector<kit::ClassBatch> held_out =
      kit::class_batches(task, cfg.get_int("eval_size"), 250, eval_gen);
  Table t("Held-out recall accuracy", {"model", "parameters", "accuracy", "train s"});
  struct Trained {
    double accuracy, seconds;
    int64_t params;
  };
  // Independent models: each draws from its own generators (the same seeds: the same data).
  const std::vector<Trained> runs = kit::side_by_side(ks.size(), [&](size_t i) {
    Generator init(ctx.seed()), data_gen(ctx.seed() + 1);
    MixerModel m(model_options(cfg, task.tokenizer().vocab_size(), task.max_src_len()),
                 ks[i].at_length(task.max_src_len()), init);
    const double s =
        kit::train_classifier(m, task, ks[i].name, steps, batch, cfg.get_real("lr"), data_gen)
            .wall_seconds;
    return Trained{kit::class_accuracy(m, held_out), s, m.num_parameters()};
  });
  for (size_t i = 0; i < ks.size(); ++i) {
    r.accuracy.push_back(runs[i].accuracy);
    r.params.push_back(runs[i].params);
    t.add_row({ks[i].name, std::to_string(r.params.back()), fixed(r.accuracy.back(), 3),
               fixed(runs[i].seconds, 1)});
    ctx.result("recall_accuracy_" + ks[i].name, r.accuracy.back());
    ctx.result("parameters_" + ks[i].name, r.params.back());
  }
  ctx.table(t);
  ctx.result("recall_chance", r.chance);
  ctx.result("recall_window_ceiling", r.window_ceiling);
  ctx.note(fmt::format(
      "Chance is {:.2f}. The window model's last position depends on the last L w = {} inputs "
      "only, while the pairs span {} positions before the query: at most the pairs within reach "
      "can be answered, the rest guessed, a ceiling of {:.3f}.",
      r.chance, layers * w, 2 * pairs + 1, r.window_ceiling));

  BarChart bars;
  for (const Kind& k : ks) bars.labels.push_back(k.name);
  bars.series = {{"held-out accuracy", r.accuracy}};
  bars.title = fmt::format("Associative recall, {} pairs", pairs);
  bars.y_label = "accuracy";
  bars.y_max = 1.0;
  ctx.figure("recall", bar_chart_svg(bars), "Recall accuracy after equal training");
  return r;
}

void check(const Config& cfg) {
  require_divides(cfg, "nhead", "d_model");
  kit::require_increasing(cfg, "lengths", "triangle-tradeoff", "lengths", 2);
  if (cfg.get_int("pairs") > 26)
    throw UsageError("triangle-tradeoff: --pairs must be at most 26 (distinct keys a..z)");
}

void run(const Config& cfg, RunContext& ctx) {
  ctx.note(fmt::format("Models: MixerModel, d_model {}, {} heads, {} layers, causal; window {}.",
                       cfg.get_int("d_model"), cfg.get_int("nhead"), cfg.get_int("num_layers"),
                       cfg.get_int("window")));
  const std::vector<Kind> ks = kinds(cfg, ctx);
  const Timed tm = timing_part(cfg, ctx, ks);
  const Decoded dec = decoding_part(cfg, ctx, ks);
  const Recalled rc = recall_part(cfg, ctx, ks);
  triangle::judge(cfg, ctx, ks, tm, dec, rc);
}

}  // namespace

Experiment triangle_tradeoff() {
  Experiment e;
  e.name = "triangle-tradeoff";
  e.source = "000 §9.6";
  e.purpose =
      "Softmax, linear attention, S6 and a sliding window: training time against T, decoding "
      "state per token, associative recall — the triangle's three corners measured";
  e.nondeterministic = {
      "scores step-time exponents, and the linear-time corner, from measured times",
      {"^corners_", "^softmax_slower_from_T", "step-time exponent", "holds all three corners"}};
  e.config
      .add_ints("lengths", {64, 128, 256, 512, 1024, 2048}, "lengths T of the timed training step")
      .add_int("time_batch", 4, "batch of the timed step", {.min = 1})
      .add_int("time_threads", 1, "threads of the timed step (0: the run's --threads)", {.min = 0})
      .add_int("reps", 7, "timed rounds per length", {.min = 1})
      .add_real("budget_s", 3.0, "fewer rounds where one round exceeds this (0: none)", {.min = 0})
      .add_int("window", 3, "sliding window: position t reads t-w..t", {.min = 0})
      .add_int("d_state", 16, "S6: state entries N per channel", {.min = 1})
      .add_int("s6_expand", 1,
               "S6: E = s6_expand d_model channels (1: parameters near attention's)", {.min = 1})
      .add_int("decode_steps", 256, "tokens decoded one at a time in Part 2", {.min = 2})
      .add_int("pairs", 6, "recall: key-value pairs per example", {.min = 1});
  add_model_fields(e.config, {.d_model = 32, .nhead = 2, .num_layers = 2});
  // Part 3, recall: Adam at a constant rate.
  add_optimizer_fields(e.config, {.steps = 2000, .batch_size = 32, .lr = 3e-3});
  add_eval_fields(e.config, {.eval_size = 1000});
  e.quick = {
      {"lengths", "64,128,256,512"}, {"reps", "3"}, {"decode_steps", "64"}, {"eval_size", "500"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
