// selective-ssm [000 §9.1-9.5, 003]: from linear attention's fixed state to a selective one.
//
//   attnlab run selective-ssm
//   attnlab run selective-ssm --hippo_n 2,4,8,16,32,64,128 --steps 1500 --copy_tokens 6
//
// Part 1, HiPPO-LegS (§9.2; experiments/common/hippo.h): feed a 1-D signal of hippo_length samples
// through the LegS online update with N coefficients, reconstruct the whole history from those N
// numbers at the end, and measure the RMSE against N, for two kinds of random signal (smooth: white
// noise under a Gaussian blur; band-limited: random Fourier modes up to a cut-off). Beside it, the
// offline least-squares fit with the same N Legendre functions, the best any N coefficients of
// that basis can do: the online memory should reach it.
//
// Part 2, the S6 layer's two scans (§9.5: "parallelizable during training"): nn::SelectiveSSM run
// as the textbook sequential tape scan (one small op per step) and as the fused chunked scan,
// outputs and gradients compared, and one forward + backward of each timed at a few T.
//
// Part 3, the tasks (§9.3-9.5): selective copying (data/tasks/selective_copy.h: K data tokens at
// random positions among noise, repeated in order at K markers; the loss on those K positions only)
// and associative recall (data/tasks/recall.h: "k1 v1 ... kn vn ? q", the value read at the last
// position), each learned by three causal MixerModels (experiments/common/mixer_model.h) that
// differ only in the token mixer: softmax attention, linear attention (phi = elu + 1, the state
// S_t = S_{t-1} + phi(k_t) v_t^T of §9.1), and S6. Equal steps, batch and learning rate; the widths
// chosen so the parameter counts agree within 10% (printed). Accuracy per answer token and per
// whole answer, on fresh examples. Then the trained S6 model's step size Delta (§9.4: large on the
// tokens to keep, small on noise) read out of its first layer at data, noise and marker tokens
// (experiments/common/s6_probe.h).
#include "nn/ssm/selective_ssm.h"
#include "data/tasks/recall.h"
#include "data/tasks/selective_copy.h"
#include "experiments/common/answer_training.h"
#include "experiments/common/hippo_study.h"
#include "experiments/common/mixer_model.h"
#include "experiments/common/s6_probe.h"
#include "experiments/common/scan_agreement.h"
#include "experiments/common/ssm_mixer.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// ---- Part 3: the tasks -----------------------------------------------------------------------

struct MixerKind {
  std::string name;
  std::function<Mixer(int64_t d_model, Generator& gen)> make;
};

std::vector<MixerKind> mixer_kinds(const Config& cfg) {
  const int64_t nhead = cfg.get_int("nhead");
  return {
      {"softmax", [nhead](int64_t d, Generator& g) { return softmax_mixer(d, nhead, true, g); }},
      {"linear", [nhead](int64_t d, Generator& g) { return linear_mixer(d, nhead, true, g); }},
      {"s6", [n = cfg.get_int("d_state"), chunk = cfg.get_int("chunk")](int64_t d, Generator& g) {
         return s6_mixer(d, n, g, {.chunk = chunk});
       }}};
}

MixerModelOptions body(const Config& cfg, const data::Task& task, int64_t d_model) {
  return {.vocab = task.tokenizer().vocab_size(),
          .max_len = task.max_src_len(),
          .d_model = d_model,
          .layers = cfg.get_int("num_layers"),
          .classes = task.num_classes()};
}

std::unique_ptr<MixerModel> build(
    const Config& cfg, const data::Task& task, const MixerKind& kind, int64_t d, uint64_t seed) {
  Generator init(seed);
  return std::make_unique<MixerModel>(
      body(cfg, task, d), [&](int64_t, Generator& g) { return kind.make(d, g); }, init);
}

// The width (a multiple of nhead, from 2 nhead up to 4 d_model) whose model has the parameter count
// closest to `target`.
int64_t matched_width(const Config& cfg,
                      const data::Task& task,
                      const MixerKind& kind,
                      int64_t target) {
  const int64_t step = cfg.get_int("nhead");
  int64_t best = cfg.get_int("d_model"), best_gap = -1;
  for (int64_t d = 2 * step; d <= 4 * cfg.get_int("d_model"); d += step) {
    const int64_t gap = std::abs(build(cfg, task, kind, d, 0)->num_parameters() - target);
    if (best_gap < 0 || gap < best_gap) best = d, best_gap = gap;
  }
  return best;
}

struct TaskResult {
  std::vector<std::string> mixers;
  std::vector<int64_t> widths, params;
  std::vector<double> token_acc, answer_acc, seconds;
  std::vector<AnswerRun> runs;
  std::vector<std::unique_ptr<MixerModel>> models;  // trained, in the order of mixers
};

TaskResult task_part(const Config& cfg,
                     RunContext& ctx,
                     const data::Task& task,
                     const std::string& key,
                     const std::string& title) {
  const std::vector<MixerKind> kinds = mixer_kinds(cfg);
  const int64_t d = cfg.get_int("d_model");
  const int64_t target = build(cfg, task, kinds[0], d, 0)->num_parameters();
  const AnswerTrainingOptions o{.steps = cfg.get_int("steps"),
                                .batch = cfg.get_int("batch_size"),
                                .lr = cfg.get_real("lr"),
                                .log_every = std::max<int64_t>(1, cfg.get_int("steps") / 40),
                                .eval_size = cfg.get_int("eval_size")};
  TaskResult r;
  Table t(title, {"mixer", "d_model", "parameters", "vs softmax", "token accuracy",
                  "whole-answer accuracy", "train s"});
  for (const MixerKind& kind : kinds) {
    const int64_t w = kind.name == "softmax" ? d : matched_width(cfg, task, kind, target);
    std::unique_ptr<MixerModel> m = build(cfg, task, kind, w, ctx.seed() + 17);
    const AnswerRun run = train_on_answers(*m, task, o, ctx.seed() + 29);
    r.mixers.push_back(kind.name);
    r.widths.push_back(w);
    r.params.push_back(m->num_parameters());
    r.token_acc.push_back(run.token_accuracy);
    r.answer_acc.push_back(run.answer_accuracy);
    r.seconds.push_back(run.seconds);
    r.runs.push_back(run);
    r.models.push_back(std::move(m));
    t.add_row({kind.name, std::to_string(w), std::to_string(r.params.back()),
               fmt::format("{:+.1f}%", 100.0 * (static_cast<double>(r.params.back()) / target - 1)),
               fixed(run.token_accuracy, 3), fixed(run.answer_accuracy, 3), fixed(run.seconds, 1)});
  }
  ctx.table(t);
  ctx.result(key + "_mixers", r.mixers);
  ctx.result(key + "_d_model", r.widths);
  ctx.result(key + "_parameters", r.params);
  ctx.result(key + "_token_accuracy", r.token_acc);
  ctx.result(key + "_answer_accuracy", r.answer_acc);
  ctx.result(key + "_train_seconds", r.seconds);
  CsvWriter csv = ctx.csv(key + "_curves", {"mixer", "step", "loss"});
  LinePlot p = kit::line_plot(title + ": training loss", "step",
                              "cross-entropy of the answer positions", kit::Axes::kLogY);
  for (size_t i = 0; i < r.runs.size(); ++i) {
    p.series.push_back(
        {r.mixers[i], r.runs[i].curve_steps, r.runs[i].curve_loss, "", false, false});
    for (size_t j = 0; j < r.runs[i].curve_steps.size(); ++j)
      csv.row({static_cast<double>(i), r.runs[i].curve_steps[j], r.runs[i].curve_loss[j]});
  }
  ctx.figure(key + "_loss", line_plot_svg(p), title + ": training loss per mixer");
  return r;
}

size_t index_of(const TaskResult& r, const std::string& mixer) {
  return static_cast<size_t>(std::find(r.mixers.begin(), r.mixers.end(), mixer) - r.mixers.begin());
}

// ---- Delta of the trained S6 model on selective copying (§9.4) --------------------------------

struct Selection {
  double data = 0, noise = 0, marker = 0;  // mean Delta over tokens of each kind and channels
  double channels_data_above_noise = 0;    // fraction of channels with a larger mean at data
  int64_t channels = 0;                    // E, the layer's inner channels
};

Selection selection(const MixerModel& s6, const data::SelectiveCopyTask& task, uint64_t seed) {
  Generator gen(seed);
  const AnswerBatch b = answer_batch(task, 200, gen);
  const Tensor delta = first_layer_delta(s6, b.ids);  // (B,T,E)
  const int64_t n = delta.size(0), t = delta.size(1), e = delta.size(2);
  std::vector<double> sum[3], count(3, 0.0);  // per kind (data, noise, marker), per channel
  for (auto& v : sum) v.assign(static_cast<size_t>(e), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < t; ++j) {
      const auto id = static_cast<int64_t>(b.ids[i * t + j]);
      const int kind = id == task.marker_id() ? 2 : id == task.noise_id() ? 1 : 0;
      count[static_cast<size_t>(kind)] += 1;
      for (int64_t c = 0; c < e; ++c)
        sum[kind][static_cast<size_t>(c)] += static_cast<double>(delta[(i * t + j) * e + c]);
    }
  Selection s;
  s.channels = e;
  double* means[3] = {&s.data, &s.noise, &s.marker};
  for (int k = 0; k < 3; ++k) {
    for (double v : sum[k]) *means[k] += v;
    *means[k] /= count[static_cast<size_t>(k)] * static_cast<double>(e);
  }
  for (int64_t c = 0; c < e; ++c)
    s.channels_data_above_noise +=
        sum[0][static_cast<size_t>(c)] / count[0] > sum[1][static_cast<size_t>(c)] / count[1];
  s.channels_data_above_noise /= static_cast<double>(e);
  return s;
}

void check(const Config& cfg) {
  require_divides(cfg, "nhead", "d_model");
  const std::vector<int64_t> ns = cfg.get_ints("hippo_n");
  if (ns.size() < 2 || !std::is_sorted(ns.begin(), ns.end()) ||
      std::adjacent_find(ns.begin(), ns.end()) != ns.end() || ns.front() < 1)
    throw UsageError("selective-ssm: --hippo_n needs at least two increasing sizes >= 1");
  if (cfg.get_int("copy_tokens") > cfg.get_int("copy_len"))
    throw UsageError(fmt::format("selective-ssm: --copy_tokens {} must be at most --copy_len {}",
                                 cfg.get_int("copy_tokens"), cfg.get_int("copy_len")));
  const std::vector<int64_t> ts = cfg.get_ints("scan_lengths");
  if (ts.size() < 2 || !std::is_sorted(ts.begin(), ts.end()) ||
      std::adjacent_find(ts.begin(), ts.end()) != ts.end())
    throw UsageError("selective-ssm: --scan_lengths needs at least two increasing lengths");
  if (cfg.get_int("recall_pairs") > 26)
    throw UsageError("selective-ssm: --recall_pairs must be at most 26 (one letter per key)");
}

// The trained S6 model's Delta at data, noise and marker tokens: the note and the results.
Selection delta_part(const MixerModel& s6, const data::SelectiveCopyTask& copy, RunContext& ctx) {
  const Selection sel = selection(s6, copy, ctx.seed() + 71);
  ctx.note(fmt::format(
      "The trained S6 model's first layer, on 200 fresh selective-copy inputs: mean Delta {:.3g} "
      "at data tokens, {:.3g} at noise, {:.3g} at the markers (ratio data / noise {:.2f}); {:.0f}% "
      "of its {} channels have a larger mean Delta at data than at noise.",
      sel.data, sel.noise, sel.marker, sel.data / sel.noise, 100 * sel.channels_data_above_noise,
      sel.channels));
  ctx.result("copy_delta_data", sel.data);
  ctx.result("copy_delta_noise", sel.noise);
  ctx.result("copy_delta_marker", sel.marker);
  ctx.result("copy_delta_channels_data_above_noise", sel.channels_data_above_noise);
  return sel;
}

// 000 §9.2-9.5's claims: HiPPO's memory (part 1), S6's parallel scan (part 2).
void add_memory_rows(DocumentComparison& cmp, const HippoStudy& h, const ScanResult& sc) {
  cmp.add_exact("HiPPO: the history's error falls as N grows (smooth signals)", "yes",
                h.falls[0] ? "yes" : "no");
  cmp.add_exact("HiPPO: the history's error falls as N grows (band-limited signals)", "yes",
                h.falls[1] ? "yes" : "no");
  cmp.add(
      "HiPPO: the online memory is the optimal projection (largest RMSE between the two "
      "reconstructions)",
      0.0, h.worst_gap, 0.01, "", 4);
  cmp.add(
      "S6: the parallel (chunked) scan computes the recurrence (largest relative difference, "
      "outputs and gradients)",
      0.0, std::max(sc.output_diff, sc.gradient_diff), 1e-4, "", 7);
  const bool linear_time = std::abs(sc.chunked_slope - 1) <= 0.3;
  cmp.add("S6: cost linear in T (exponent of the chunked scan's time)", 1.0, sc.chunked_slope, 0.3,
          linear_time
              ? "forward + backward at the two longest --scan_lengths"
              : fmt::format("measured at the two longest --scan_lengths, where the "
                            "sequential scan grows like T^{:.2f} too: the work per time step "
                            "is constant, so the excess comes from the implementation or "
                            "the machine (load average in the results), not from the "
                            "recurrence",
                            sc.sequential_slope),
          2);
}

// Part 3's claims: selection (Delta, selective copying) and precise matching (recall).
void add_task_rows(DocumentComparison& cmp,
                   const Config& cfg,
                   const TaskResult& c,
                   const TaskResult& rc,
                   const Selection& sel) {
  const size_t cl = index_of(c, "linear"), c6 = index_of(c, "s6");
  cmp.add_exact(
      "S6 Delta: large at the tokens to keep, small at noise (mean over channels, data / noise > "
      "1.2)",
      "yes", sel.data > 1.2 * sel.noise ? "yes" : "no",
      sel.data > 1.2 * sel.noise
          ? ""
          : fmt::format(
                "measured in the first S6 layer of the trained model (whole answers {:.3f}): "
                "mean Delta {:.3g} at data, {:.3g} at noise, {:.3g} at markers (initial "
                "range log-uniform in [{:g}, {:g}]), so the selection the task needs is "
                "made elsewhere (B_t, C_t, the SiLU(z) gate or the second layer; not "
                "measured here); with {} tokens before the markers the state need not "
                "forget",
                c.answer_acc[c6], sel.data, sel.noise, sel.marker, nn::SelectiveSsmOptions{}.dt_min,
                nn::SelectiveSsmOptions{}.dt_max, cfg.get_int("copy_len")));
  const bool linear_fails = c.answer_acc[cl] < 0.5;
  const int64_t d_head = cfg.get_int("d_model") / cfg.get_int("nhead");
  cmp.add_exact(
      "linear attention only accumulates: it fails at selective copying (whole answers < 0.5)",
      "yes", linear_fails ? "yes" : "no",
      linear_fails
          ? ""
          : fmt::format("its keys are learned: phi(k) = elu(k) + 1 tends to 0 for very negative "
                        "k, so noise tokens can be given near-zero features and add almost nothing "
                        "to the state; with {} tokens to keep and a {} x {} state per head, "
                        "capacity is no limit",
                        cfg.get_int("copy_tokens"), d_head, d_head));
  cmp.add_exact(
      "selectivity fixes linear attention: S6 beats it at selective copying (whole "
      "answers)",
      "yes", c.answer_acc[c6] > c.answer_acc[cl] ? "yes" : "no");
  const size_t rs = index_of(rc, "softmax"), rl = index_of(rc, "linear"), r6 = index_of(rc, "s6");
  cmp.add_exact("S6 beats linear attention at associative recall", "yes",
                rc.answer_acc[r6] > rc.answer_acc[rl] ? "yes" : "no");
  cmp.add_exact("locality returns: softmax attention beats S6 at precise matching (recall)", "yes",
                rc.answer_acc[rs] > rc.answer_acc[r6] ? "yes" : "no");
  cmp.add_exact("§9.6: linear attention is weak at precise matching, softmax strong (recall)",
                "yes", rc.answer_acc[rs] > rc.answer_acc[rl] + 0.1 ? "yes" : "no",
                rc.answer_acc[rs] > rc.answer_acc[rl] + 0.1
                    ? ""
                    : "neither learned recall well within --steps: see the training curves");
}

void run(const Config& cfg, RunContext& ctx) {
  const HippoStudy h = hippo_study(cfg, ctx);
  const ScanResult sc = scan_part(cfg, ctx);

  const data::SelectiveCopyTask copy(
      {.seq_len = cfg.get_int("copy_len"),
       .num_tokens = cfg.get_int("copy_tokens"),
       .alphabet = std::string("abcdefghijklmnop")
                       .substr(0, static_cast<size_t>(cfg.get_int("copy_alphabet")))});
  const data::RecallTask recall({.num_pairs = cfg.get_int("recall_pairs")});
  ctx.section(fmt::format("Part 3: the tasks, {} steps of batch {} per model ({} layers, causal)",
                          cfg.get_int("steps"), cfg.get_int("batch_size"),
                          cfg.get_int("num_layers")));
  const TaskResult c =
      task_part(cfg, ctx, copy, "copy",
                fmt::format("Selective copying: {} tokens among {} (chance per token 1/{})",
                            cfg.get_int("copy_tokens"), cfg.get_int("copy_len"),
                            cfg.get_int("copy_alphabet")));
  const TaskResult rc = task_part(
      cfg, ctx, recall, "recall",
      fmt::format("Associative recall: {} pairs, the value of the queried key (chance 1/10)",
                  cfg.get_int("recall_pairs")));
  const Selection sel = delta_part(*c.models[index_of(c, "s6")], copy, ctx);
  DocumentComparison cmp("000 §9.2-9.5 vs ours");
  add_memory_rows(cmp, h, sc);
  add_task_rows(cmp, cfg, c, rc, sel);
  ctx.compare(cmp);
}

}  // namespace

Experiment selective_ssm() {
  Experiment e;
  e.name = "selective-ssm";
  e.source = "000 §9.1-9.5, 003";
  e.purpose =
      "HiPPO-LegS memory error vs N; S6's sequential and chunked scans; selective copying and "
      "associative recall for S6, softmax and linear attention";
  e.typical_time = "~1.5 min";
  e.nondeterministic = {"fits the chunked scan's cost exponent to measured times",
                        {"cost linear in T"}};
  e.config.add_ints("hippo_n", {4, 8, 16, 32, 64}, "HiPPO state sizes N")
      .add_int("hippo_length", 1000, "samples in each HiPPO signal", {.min = 2})
      .add_int("hippo_trials", 4, "random signals per kind", {.min = 1})
      .add_real("smooth_width", 0.02,
                "smooth signal: Gaussian blur width, a fraction of the length", {.min = 1e-4})
      .add_int("band_cycles", 8, "band-limited signal: highest frequency, periods per history",
               {.min = 1})
      .add_int("copy_len", 32, "selective copy: tokens before the markers", {.min = 1})
      .add_int("copy_tokens", 4, "selective copy: data tokens to copy", {.min = 1})
      .add_int("copy_alphabet", 8, "selective copy: distinct data tokens", {.min = 2, .max = 16})
      .add_ints("scan_lengths", {64, 256, 1024}, "lengths T at which the two scans are compared")
      .add_int("scan_batch", 2, "batch of the scan comparison", {.min = 1})
      .add_int("scan_reps", 5, "timed rounds per length", {.min = 1})
      .add_int("d_state", 16, "S6 state size N per channel", {.min = 1})
      .add_int("chunk", 64, "S6 chunked scan: time steps per chunk", {.min = 1})
      .add_int("recall_pairs", 4, "associative recall: key-value pairs", {.min = 1});
  // d_model: the softmax model's width (the others are matched to it by parameters).
  add_model_fields(e.config, {.d_model = 32, .nhead = 2, .num_layers = 2});
  add_optimizer_fields(e.config, {.steps = 1000, .batch_size = 32, .lr = 3e-3});  // Adam, constant
  add_eval_fields(e.config, {.eval_size = 1000});
  e.quick = {{"hippo_trials", "2"},
             {"scan_lengths", "64,256"},
             {"scan_reps", "3"},
             {"steps", "150"},
             {"eval_size", "300"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
