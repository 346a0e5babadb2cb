// additive-vs-dot [004 §2.3 and §1.1]: Bahdanau's additive score w^T tanh(q + k) against the
// Transformer's scaled dot product q.k / sqrt(d), in the same encoder-decoder on reversal.
//
//   attnlab run additive-vs-dot
//   attnlab run additive-vs-dot --lengths 32,64,128,256,512 --head_dims 8,32,128
//
// Three parts:
//   1. Quality: two reversal models trained with train/run (--score dot, --score additive), the
//      same seed, data and schedule; held-out exact match and the step that reached --target.
//   2. Time per training step: forward + backward of one batch through each trained model, the
//      two run in alternation (interleaved_timing.h) so outside load slows both alike.
//   3. The score step alone (scores (B,H,T,S) from q, k, forward + backward), against T and
//      against the head width d_h: time, and peak tensor memory counted by the buffer pool.
//
// What to expect. Counted in FLOPs the two scores are of the same order: q k^T is 2 T S d
// multiply-adds; additive is T S d additions, T S d tanh and 2 T S d for the product with w, about
// twice as many. That is the document's "overall complexity is close". Memory is not close: the
// dot product's GEMM writes only the T S scores, while additive materialises q_i + k_j and its
// tanh, two (B,H,T,S,d) tensors that the tape keeps for backward (additive_attention.h) — about
// 2 d_h times the memory, growing with d_h. And a GEMM runs near the CPU's peak rate, while the
// additive path streams those big tensors through memory with a tanh per entry.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "data/batch.h"
#include "experiments/common/interleaved_timing.h"
#include "experiments/common/loglog.h"
#include "experiments/common/peak_memory.h"
#include "experiments/common/trained_run.h"
#include "experiments/experiment.h"
#include "experiments/kit/summary.h"
#include "experiments/report/charts.h"
#include "experiments/run_context.h"
#include "nn/attention/additive_attention.h"
#include "nn/transformer/seq2seq.h"

namespace attn::experiments {

namespace {

struct Trained {
  std::string score;  // "dot" | "additive"
  TrainedRun run;
  double exact = 0;
  int64_t steps_to_target = -1;  // first evaluation at or above --target; -1: never
};

// The reversal run: the shared reversal fields, lengths up to --max_len (held-out: the upper
// half, --max_len / 2 .. --max_len), and the score.
train::TrainConfig train_config(const Config& cfg, uint64_t seed, const std::string& score) {
  train::TrainConfig tc = reversal_train_config(cfg, seed);
  tc.max_len = cfg.get_int("max_len");
  tc.eval_min_len = std::max<int64_t>(1, tc.max_len / 2);
  tc.eval_max_len = tc.max_len;
  tc.score = score;
  return tc;
}

// The largest score an additive head can give: |w_h^T tanh(.)| <= ||w_h||_1, over every head of
// every attention module (0 for the dot-product model, which has no w).
double additive_score_bound(nn::Module& model) {
  double bound = 0;
  for (const auto& [name, p] : model.named_parameters()) {
    if (!name.ends_with("additive_v")) continue;
    const Tensor& w = p.value();
    for (int64_t h = 0; h < w.size(0); ++h) {
      double l1 = 0;
      for (int64_t d = 0; d < w.size(1); ++d) l1 += std::abs(w.at({h, d}));
      bound = std::max(bound, l1);
    }
  }
  return bound;
}

Trained train_one(const Config& cfg, RunContext& ctx, const std::string& score) {
  const train::TrainConfig tc = train_config(cfg, ctx.seed(), score);
  Trained t{score, train_for_experiment(tc, ctx, "train-" + score)};
  const train::TrainResult& r = t.run.summary.result;
  t.exact = t.run.summary.final_eval.at("exact_match");
  for (const auto& [step, m] : r.evals)
    if (m.count("exact_match") && m.at("exact_match") >= tc.target) {
      t.steps_to_target = step;
      break;
    }
  ctx.preformatted(fmt::format(
      "{}\nstopped after step {} ({}), {:.1f} s, held-out exact match {:.3f}",
      t.run.summary.model_description, r.last_step, r.stop_reason, r.wall_seconds, t.exact));
  return t;
}

// Part 2: one training step's forward + backward, the two models in alternation.
std::vector<Timing> time_training_steps(const Config& cfg, std::vector<Trained>& models) {
  const auto& set = models[0].run.setup.heldout_set;
  const size_t n = std::min(set.size(), static_cast<size_t>(cfg.get_int("batch")));
  const std::vector<data::Example> batch(set.begin(), set.begin() + static_cast<long>(n));
  std::vector<std::function<void()>> works;
  for (Trained& t : models) {
    train::TaskModel* m = t.run.summary.model.get();
    works.push_back([m, &batch] {
      m->module().zero_grad();
      m->loss(batch).loss.backward();
    });
  }
  return time_interleaved(works, static_cast<int>(cfg.get_int("step_reps")),
                          cfg.get_real("budget_s"));
}

// Part 3: the score step on random q, k (B,H,T,T,d): time (interleaved) and peak tensor bytes.
struct ScoreCost {
  double dot_ms = 0, add_ms = 0;          // medians
  double dot_min_ms = 0, add_min_ms = 0;  // the least disturbed rounds
  int64_t dot_bytes = 0, add_bytes = 0;
  double time_ratio() const { return add_ms / dot_ms; }
  // The ratio of the minima: a burst of outside load in one round moves a median of few rounds
  // but rarely both minima.
  double min_time_ratio() const { return add_min_ms / dot_min_ms; }
  double memory_ratio() const { return static_cast<double>(add_bytes) / dot_bytes; }
};

ScoreCost score_cost(
    int64_t b, int64_t h, int64_t t, int64_t d, const Config& cfg, Generator& gen) {
  Var q = Var::parameter(Tensor::randn({b, h, t, d}, gen));
  Var k = Var::parameter(Tensor::randn({b, h, t, d}, gen));
  Var w = Var::parameter(Tensor::randn({h, d}, gen));
  const real scale = static_cast<real>(1.0 / std::sqrt(static_cast<double>(d)));
  auto zero = [&] {
    for (Var* p : {&q, &k, &w}) p->zero_grad();
  };
  // The dot product's scores as the fast path computes them: one GEMM with the scale inside.
  auto dot = [&] {
    zero();
    sum(matmul(q, k, false, true, scale)).backward();
  };
  auto additive = [&] {
    zero();
    sum(nn::additive_scores(q, k, w)).backward();
  };
  const std::vector<Timing> tm = time_interleaved(
      {dot, additive}, static_cast<int>(cfg.get_int("reps")), cfg.get_real("budget_s"));
  PeakMemory probe;
  ScoreCost c;
  c.dot_ms = tm[0].median_s * 1e3;
  c.add_ms = tm[1].median_s * 1e3;
  c.dot_min_ms = tm[0].min_s * 1e3;
  c.add_min_ms = tm[1].min_s * 1e3;
  c.dot_bytes = probe.measure(dot).tensor_bytes;
  c.add_bytes = probe.measure(additive).tensor_bytes;
  return c;
}

struct Sweep {
  std::vector<double> x;
  std::vector<ScoreCost> cost;
  std::vector<double> get(double (ScoreCost::*f)() const) const {
    std::vector<double> out;
    for (const auto& c : cost) out.push_back((c.*f)());
    return out;
  }
  std::vector<double> ms(double ScoreCost::*f) const {
    std::vector<double> out;
    for (const auto& c : cost) out.push_back(c.*f);
    return out;
  }
};

Sweep sweep(const std::string& what,
            const std::vector<int64_t>& values,
            const Config& cfg,
            RunContext& ctx,
            Generator& gen) {
  const int64_t b = cfg.get_int("scale_batch"), h = cfg.get_int("scale_heads");
  const bool over_t = what == "T";
  const int64_t fixed_t = cfg.get_int("scale_t"), fixed_d = cfg.get_int("scale_d");
  Table tab(over_t ? fmt::format("B = {}, H = {}, d_h = {}, S = T", b, h, fixed_d)
                   : fmt::format("B = {}, H = {}, T = S = {}", b, h, fixed_t),
            {what, "dot ms", "additive ms", "time additive / dot", "dot MB", "additive MB",
             "memory additive / dot"});
  Sweep s;
  for (int64_t v : values) {
    const ScoreCost c = score_cost(b, h, over_t ? v : fixed_t, over_t ? fixed_d : v, cfg, gen);
    s.x.push_back(static_cast<double>(v));
    s.cost.push_back(c);
    tab.add_row({std::to_string(v), fixed(c.dot_ms, 3), fixed(c.add_ms, 3),
                 fixed(c.time_ratio(), 1), fixed(c.dot_bytes / 1e6, 2), fixed(c.add_bytes / 1e6, 2),
                 fixed(c.memory_ratio(), 1)});
  }
  ctx.table(tab);
  const std::string key = over_t ? "by_T" : "by_d";
  ctx.result("score_" + key + "_values", values);
  ctx.result("score_" + key + "_dot_ms", s.ms(&ScoreCost::dot_ms));
  ctx.result("score_" + key + "_additive_ms", s.ms(&ScoreCost::add_ms));
  ctx.result("score_" + key + "_time_ratio", s.get(&ScoreCost::time_ratio));
  ctx.result("score_" + key + "_memory_ratio", s.get(&ScoreCost::memory_ratio));
  std::vector<double> db, ab;
  for (const auto& c : s.cost)
    db.push_back(static_cast<double>(c.dot_bytes)), ab.push_back(static_cast<double>(c.add_bytes));
  ctx.result("score_" + key + "_dot_bytes", db);
  ctx.result("score_" + key + "_additive_bytes", ab);
  return s;
}

void training_figure(const std::vector<Trained>& models, RunContext& ctx) {
  LinePlot p;
  for (const Trained& t : models) {
    std::vector<double> xs, ys;
    for (const auto& [step, m] : t.run.summary.result.evals)
      if (m.count("exact_match"))
        xs.push_back(static_cast<double>(step)), ys.push_back(m.at("exact_match"));
    p.series.push_back({t.score == "dot" ? "scaled dot product" : "additive (Bahdanau)", xs, ys,
                        t.score == "dot" ? "#3b82f6" : "#f59e0b"});
  }
  p.title = "Held-out exact match while training (reversal)";
  p.x_label = "step";
  p.y_label = "exact match";
  ctx.figure("training", line_plot_svg(p), "Both score functions learn reversal");
}

void scaling_figures(const Sweep& by_t, const Sweep& by_d, RunContext& ctx) {
  auto log_log = [&](const char* name, std::vector<Series> series, const std::string& title,
                     const std::string& x_label, const std::string& y_label,
                     const std::string& caption) {
    LinePlot p;
    p.series = std::move(series);
    p.log_x = p.log_y = true;
    p.title = title;
    p.x_label = x_label;
    p.y_label = y_label;
    ctx.figure(name, line_plot_svg(p), caption);
  };
  log_log("score_time_by_T",
          {{"dot product", by_t.x, by_t.ms(&ScoreCost::dot_ms), "#3b82f6"},
           {"additive", by_t.x, by_t.ms(&ScoreCost::add_ms), "#f59e0b"}},
          "Score step (forward + backward) against T", "sequence length T (= S)", "ms",
          "The score step's time against T, both score functions");
  log_log("ratio_by_d",
          {{"time additive / dot", by_d.x, by_d.get(&ScoreCost::time_ratio), "#ef4444"},
           {"memory additive / dot", by_d.x, by_d.get(&ScoreCost::memory_ratio), "#10b981"}},
          "What additive costs more, against the head width", "head width d_h", "additive / dot",
          "The (B,H,T,S,d_h) tensor: the memory ratio grows with d_h");
}

void run(const Config& cfg, RunContext& ctx) {
  // ---- 1. quality ----
  ctx.section("Training the reversal model twice (train/run): --score dot, --score additive");
  std::vector<Trained> models;
  models.push_back(train_one(cfg, ctx, "dot"));
  models.push_back(train_one(cfg, ctx, "additive"));
  const Trained &dot = models[0], &add = models[1];
  ctx.result("dot_exact_match", dot.exact);
  ctx.result("additive_exact_match", add.exact);
  ctx.result("dot_steps_to_target", dot.steps_to_target);
  ctx.result("additive_steps_to_target", add.steps_to_target);
  ctx.result("additive_minus_dot_exact_match", add.exact - dot.exact);
  const double bound = additive_score_bound(add.run.summary.model->module());
  ctx.result("additive_score_bound", bound);
  ctx.note(fmt::format(
      "An additive head's score lies within +-||w_h||_1 (tanh is at most 1 in size): after "
      "training the largest ||w_h||_1 is {:.2f}, so two keys' scores differ by at most {:.2f} "
      "and a softmax row puts at most {:.3f} of its weight on one key of {} (every other key at "
      "the opposite end). A dot-product score has no such ceiling.",
      bound, 2 * bound,
      1 / (1 + static_cast<double>(cfg.get_int("max_len")) * std::exp(-2 * bound)),
      cfg.get_int("max_len") + 1));
  training_figure(models, ctx);

  // ---- 2. time per training step ----
  ScopedThreads threads(static_cast<int>(cfg.get_int("timing_threads")));
  ctx.section(fmt::format("Time per training step (forward + backward of one batch, {} thread{})",
                          num_threads(), num_threads() == 1 ? "" : "s"));
  const double load = load_average();
  const std::vector<Timing> steps = time_training_steps(cfg, models);
  const double step_dot = steps[0].median_s * 1e3, step_add = steps[1].median_s * 1e3;
  Table st("Median of the interleaved rounds", {"score", "ms per step", "min ms"});
  st.add_row({"dot", fixed(step_dot, 2), fixed(steps[0].min_s * 1e3, 2)});
  st.add_row({"additive", fixed(step_add, 2), fixed(steps[1].min_s * 1e3, 2)});
  ctx.table(st);
  ctx.result("step_ms_dot", step_dot);
  ctx.result("step_ms_additive", step_add);
  ctx.result("step_time_ratio", step_add / step_dot);
  const double step_min_ratio = steps[1].min_s / steps[0].min_s;
  ctx.result("step_min_time_ratio", step_min_ratio);
  ctx.result("load_average_before", load);
  ctx.result("timing_threads", num_threads());

  // The score step alone at the training shape: B = batch, H = nhead, T = S = the longest
  // held-out source with its EOS, d_h = d_model / nhead.
  Generator gen(ctx.seed() + 17);
  const int64_t heads = cfg.get_int("nhead"), dh = cfg.get_int("d_model") / heads;
  const int64_t t_train = cfg.get_int("max_len") + (cfg.get_bool("src_eos") ? 1 : 0);
  const ScoreCost at_train = score_cost(cfg.get_int("batch"), heads, t_train, dh, cfg, gen);
  ctx.result("train_shape_score_ms_dot", at_train.dot_ms);
  ctx.result("train_shape_score_ms_additive", at_train.add_ms);
  ctx.result("train_shape_score_time_ratio", at_train.time_ratio());
  ctx.result("train_shape_score_memory_ratio", at_train.memory_ratio());
  ctx.note(fmt::format(
      "One training step of the additive model takes {:.2f} times as long as the dot-product "
      "model's ({:.2f} ms against {:.2f} ms; medians of up to {} alternating rounds, 1-minute "
      "load {:.1f}). The score step alone at the training shape (B = {}, H = {}, T = S = {}, "
      "d_h = {}) takes {:.1f} times as long and {:.1f} times the tensor memory; the rest of the "
      "step (projections, feed-forward, softmax, the loss) is the same in both models.",
      step_add / step_dot, step_add, step_dot, cfg.get_int("step_reps"), load, cfg.get_int("batch"),
      heads, t_train, dh, at_train.time_ratio(), at_train.memory_ratio()));

  // ---- 3. the score step against T and d_h ----
  ctx.section("The score step alone: time and peak tensor memory against T and d_h");
  const Sweep by_t = sweep("T", cfg.get_ints("lengths"), cfg, ctx, gen);
  const Sweep by_d = sweep("d_h", cfg.get_ints("head_dims"), cfg, ctx, gen);
  const std::vector<double> mem_d = by_d.get(&ScoreCost::memory_ratio),
                            time_d = by_d.get(&ScoreCost::min_time_ratio);
  std::vector<double> all = by_t.get(&ScoreCost::min_time_ratio);
  all.insert(all.end(), time_d.begin(), time_d.end());
  std::sort(all.begin(), all.end());
  // The typical ratio: the median over every cell of the two sweeps, of the ratio of minima.
  const double typical_ratio =
      all.size() % 2 ? all[all.size() / 2] : (all[all.size() / 2 - 1] + all[all.size() / 2]) / 2;
  const double mem_slope = log_log_slope(by_d.x, mem_d, 0);
  const double add_t_slope = log_log_slope(by_t.x, by_t.ms(&ScoreCost::add_ms), 0);
  const double min_ratio = all.front();
  ctx.result("memory_ratio_growth_exponent_in_d", mem_slope);
  ctx.result("additive_time_growth_exponent_in_T", add_t_slope);
  ctx.result("min_score_time_ratio", min_ratio);
  ctx.result("typical_score_time_ratio", typical_ratio);
  ctx.note(fmt::format(
      "Peak tensor memory is the buffer pool's high-water mark during forward + backward, beyond "
      "what was alive before (q, k, w). The additive / dot memory ratio grows like d_h^{:.2f} "
      "(from {:.1f} at d_h = {:.0f} to {:.1f} at d_h = {:.0f}): the (B,H,T,S,d_h) tensors "
      "against the (B,H,T,S) scores. Additive time grows like T^{:.2f}. Compared by their "
      "fastest rounds, the additive score step is {:.1f} to {:.1f} times slower than the dot "
      "product's over the cells (median {:.1f}), although it counts only about twice the FLOPs.",
      mem_slope, mem_d.front(), by_d.x.front(), mem_d.back(), by_d.x.back(), add_t_slope, min_ratio,
      all.back(), typical_ratio));
  scaling_figures(by_t, by_d, ctx);

  // ---- the document beside ours ----
  const double margin = cfg.get_real("accuracy_margin");
  DocumentComparison cmp(fmt::format(
      "004 §1.1 and §2.3 vs ours (reversal; a held-out exact-match gap below {:.2f} is a tie)",
      margin));
  const double gap = add.exact - dot.exact;
  auto reached = [](const Trained& t) {
    return t.steps_to_target < 0 ? std::string("never")
                                 : fmt::format("at step {}", t.steps_to_target);
  };
  const std::string em = fmt::format(
      "held-out exact match: additive {:.3f}, dot {:.3f}; --target {:.2f} reached: additive {}, "
      "dot {}",
      add.exact, dot.exact, cfg.get_real("target"), reached(add), reached(dot));
  const bool both_solve = std::min(add.exact, dot.exact) >= 1 - margin;
  const std::string why_not_better =
      both_solve
          ? "both models solve this toy task, so there is no quality gap left for additive to "
            "win; the cited study measured BLEU on WMT translation with recurrent "
            "encoder-decoders"
          : fmt::format(
                "within --steps {} the models have not finished learning (held-out exact "
                "match below {:.2f}), so this compares how fast they learn, not what they "
                "reach; the additive heads' largest ||w_h||_1 is {:.2f} (their scores "
                "cannot differ by more than twice that)",
                cfg.get_int("steps"), 1 - margin, bound);
  cmp.add_exact("§1.1: dot product achieves similar results to additive", "yes",
                kit::yes_no(std::abs(gap) < margin),
                std::abs(gap) < margin ? em : em + "; " + why_not_better);
  // One seed cannot show "consistently"; a gap inside the margin is a tie, not a win.
  const std::string verdict = gap >= margin ? "yes" : gap <= -margin ? "no (dot better)" : "tie";
  cmp.add_exact("§2.3 (Britz et al.): additive slightly but consistently better", "yes", verdict,
                verdict == "yes" ? em : em + "; " + why_not_better);
  cmp.add_exact(
      "§1.1: scaled dot product needs less computation (score step faster)", "yes",
      kit::yes_no(typical_ratio > 1),
      fmt::format("additive / dot score-step time (fastest rounds): median {:.1f} over the cells, "
                  "from {:.1f} to {:.1f}",
                  typical_ratio, min_ratio, all.back()));
  cmp.add(
      "§2.3: the additive score's overall complexity is close to the dot product's "
      "(score-step time ratio additive / dot, fastest rounds, at the largest d_h)",
      1.0, time_d.back(), 1.0,
      fmt::format("in FLOPs they are close (about 2x), but additive writes and reads two "
                  "(B,H,T,S,d_h) tensors ({:.0f}x the dot product's peak memory at d_h = "
                  "{:.0f}) and a tanh per entry, while q k^T is one GEMM near the CPU's peak "
                  "rate",
                  mem_d.back(), by_d.x.back()),
      1);
  cmp.add_exact("dot product is more memory-efficient (score step, every d_h)", "yes",
                kit::yes_no(*std::min_element(mem_d.begin(), mem_d.end()) > 1),
                fmt::format("memory ratio additive / dot grows like d_h^{:.2f}", mem_slope));
  cmp.add_exact("a training step of the dot-product model is faster", "yes",
                kit::yes_no(step_min_ratio > 1),
                fmt::format("fastest rounds: dot {:.2f} ms, additive {:.2f} ms",
                            steps[0].min_s * 1e3, steps[1].min_s * 1e3));
  ctx.compare(cmp);
}

}  // namespace

Experiment additive_vs_dot() {
  Experiment e;
  e.name = "additive-vs-dot";
  e.source = "004 §2.3, §1.1";
  e.purpose = "Additive (Bahdanau) vs scaled dot-product scores: accuracy, step time, memory";
  e.typical_time = "~2 min";
  e.nondeterministic = {
      "judges which score step and which training step is faster by measured times",
      {"needs less computation", "overall complexity", "model is faster"}};
  add_reversal_fields(
      e.config,
      ReversalDefaults{.nhead = 4, .steps = 800, .warmup = 60, .eval_every = 50, .eval_size = 300})
      .add_int("max_len", 12, "longest reversal sequence (held-out: max_len/2 .. max_len)",
               {.min = 2})
      .add_int("step_reps", 10, "interleaved rounds timing one training step per model", {.min = 1})
      .add_ints("lengths", {16, 32, 64, 128, 256}, "T (= S) of the score-step sweep", {.min = 1})
      .add_ints("head_dims", {8, 16, 32, 64, 128}, "d_h of the score-step sweep", {.min = 1})
      .add_int("scale_t", 128, "T (= S) while d_h varies", {.min = 1})
      .add_int("scale_d", 32, "d_h while T varies", {.min = 1})
      .add_int("scale_batch", 1, "batch of the score-step sweeps", {.min = 1})
      .add_int("scale_heads", 4, "heads of the score-step sweeps", {.min = 1})
      .add_int("reps", 10, "interleaved rounds per score-step cell at most", {.min = 1})
      .add_real("budget_s", 2.0, "about this many seconds of timing per cell", {.min = 0})
      .add_int("timing_threads", 0, "threads for the timings (0: the current count)", {.min = 0})
      .add_real("accuracy_margin", 0.05, "exact-match gap that still counts as a tie",
                {.min = 0, .max = 1})
      .add_int("seed", 1, "random seed (weights, data, held-out set, timing inputs)", {.min = 0});
  e.quick = {{"d_model", "32"},        {"max_len", "8"},   {"dim_ff", "128"},
             {"steps", "300"},         {"warmup", "30"},   {"eval_size", "100"},
             {"eval_every", "50"},     {"step_reps", "3"}, {"lengths", "16,32,64"},
             {"head_dims", "8,16,32"}, {"scale_t", "64"},  {"reps", "3"},
             {"budget_s", "0.3"}};
  e.check = [](const Config& c) {
    require_divides(c, "nhead", "d_model");
    if (c.get_ints("lengths").size() < 2 || c.get_ints("head_dims").size() < 2)
      throw UsageError("additive-vs-dot: --lengths and --head_dims need at least two values each");
    train::validate_train_config(train_config(c, 0, "additive"));
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
