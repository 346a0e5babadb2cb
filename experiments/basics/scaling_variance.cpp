// scaling-variance [000 §II, 001, 003, 004 §2.5]: why the scores are divided by sqrt(d_k).
// Every document gives the same chain: for q, k with independent unit-variance entries
// Var(q . k) = d_k, large scores saturate the softmax, a saturated softmax passes almost no
// gradient, training suffers; dividing by sqrt(d_k) brings the variance back to 1. Each link is
// measured here:
//   1. Var(q . k) over many sampled pairs against d_k: log-log slope 1 unscaled, 0 scaled;
//   2. softmax(q K^T * s) over T keys: entropy, largest weight, and the gradient the backward
//      pass delivers to the scores and to q, against d_k, for s = 1 and s = 1/sqrt(d_k);
//   3. one training run of a one-layer attention model on associative recall at d_k = 256,
//      from the same initial weights and batches, with and without the factor.
//
//   attnlab run scaling-variance
//   attnlab run scaling-variance --pairs 100000 --train_dk 512 --steps 1000
//
// Sampling error of part 1: with s = sum_i q_i k_i, E[s^2] = d and E[s^4] = 3 d^2 + 6 d, so the
// mean of N squares has relative standard error sqrt((2 + 6/d) / N); the fitted slope's standard
// error follows from it (slope_stderr below) and is what the checks compare against.
#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "experiments/common/attention_steps.h"
#include "experiments/common/loglog.h"
#include "experiments/common/pair_memory_model.h"
#include "experiments/experiment.h"
#include "experiments/report/charts.h"
#include "experiments/run_context.h"

namespace attn::experiments {

namespace {

// ---- part 1: the variance of a dot product ----

// Sample variance (about the known mean 0) of q . k over n pairs with N(0,1) entries.
double dot_variance(int64_t d, int64_t n, Generator& gen) {
  const Tensor q = Tensor::randn({n, d}, gen), k = Tensor::randn({n, d}, gen);
  double sum_sq = 0;
  for (int64_t p = 0; p < n; ++p) {
    double s = 0;
    for (int64_t i = 0; i < d; ++i) s += double(q[p * d + i]) * k[p * d + i];
    sum_sq += s * s;
  }
  return sum_sq / static_cast<double>(n);
}

// Standard error of the least-squares slope of log(var) on log(d) when each log(var) has
// standard error sqrt((2 + 6/d) / n): slope = sum_i c_i y_i with c_i = (x_i - mean x) / Sxx.
double slope_stderr(const std::vector<double>& dims, int64_t n) {
  double mean_x = 0;
  for (double d : dims) mean_x += std::log(d) / static_cast<double>(dims.size());
  double sxx = 0, var = 0;
  for (double d : dims) sxx += (std::log(d) - mean_x) * (std::log(d) - mean_x);
  for (double d : dims) {
    const double c = (std::log(d) - mean_x) / sxx;
    var += c * c * (2 + 6 / d) / static_cast<double>(n);
  }
  return std::sqrt(var);
}

// ---- part 2: what the softmax and its backward do at each d ----

struct SoftmaxStats {
  double entropy = 0, max_weight = 0, grad_scores = 0, grad_q = 0;  // means over trials
};

// Mean over rows of a (..., T) tensor of f(row).
template <class F>
double row_mean(const Tensor& t, F f) {
  const int64_t n = t.size(-1), rows = t.numel() / n;
  double s = 0;
  for (int64_t r = 0; r < rows; ++r) s += f(t.data() + r * n, n);
  return s / static_cast<double>(rows);
}

double norm_of(const real* x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += double(x[i]) * x[i];
  return std::sqrt(s);
}

// One query against `keys` keys, `trials` times at once: q (trials,1,d), K (trials,T,d), V
// (trials,T,dv) all N(0,1), loss = sum(out * u) with u N(0,1), so dL/dout is a random direction.
SoftmaxStats softmax_stats(int64_t d, int64_t keys, int64_t trials, double scale, Generator& gen) {
  const int64_t dv = 16;
  const Tensor qt = Tensor::randn({trials, 1, d}, gen), kt = Tensor::randn({trials, keys, d}, gen);
  const Var v = Var::constant(Tensor::randn({trials, keys, dv}, gen));
  const Var u = Var::constant(Tensor::randn({trials, 1, dv}, gen));
  SoftmaxStats s;
  // Through q: matmul, scale, softmax, matmul on the tape; dL/dq = s K^T dL/dz.
  Var q = Var::parameter(qt);
  const AttentionSteps st = attention_steps(q, Var::constant(kt), v, scale);
  const Tensor w = st.weights.value();
  sum(mul(st.out, u)).backward();
  s.grad_q = row_mean(q.grad(), norm_of);
  // The same softmax from the scores z as a leaf: dL/dz = (diag(p) - p p^T) V u.
  Var z = Var::parameter(st.scores.value());
  sum(mul(matmul(softmax(z), v), u)).backward();
  s.grad_scores = row_mean(z.grad(), norm_of);
  s.entropy = row_mean(w, [](const real* p, int64_t n) {
    double h = 0;
    for (int64_t j = 0; j < n; ++j) h -= p[j] > 0 ? p[j] * std::log(double(p[j])) : 0;
    return h;
  });
  s.max_weight =
      row_mean(w, [](const real* p, int64_t n) { return double(*std::max_element(p, p + n)); });
  return s;
}

// ---- part 3: training with and without the factor ----

double tail_mean(const std::vector<double>& xs, double fraction) {
  const size_t n = std::max<size_t>(1, static_cast<size_t>(fraction * double(xs.size())));
  double s = 0;
  for (size_t i = xs.size() - n; i < xs.size(); ++i) s += xs[i];
  return s / static_cast<double>(n);
}

// The first eval step at which accuracy reached `target` (NaN if never).
double first_step_at(const RecallRun& r, double target) {
  for (size_t i = 0; i < r.eval_accuracy.size(); ++i)
    if (r.eval_accuracy[i] >= target) return r.eval_steps[i];
  return NAN;
}

std::vector<double> smooth(const std::vector<double>& xs, size_t window) {
  std::vector<double> out;
  double s = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    s += xs[i];
    if (i >= window) s -= xs[i - window];
    out.push_back(s / static_cast<double>(std::min(i + 1, window)));
  }
  return out;
}

std::string step_text(double step) {
  return std::isnan(step) ? std::string("never") : fmt::format("{:.0f}", step);
}

void variance_part(const Config& cfg, RunContext& ctx, Generator& gen, DocumentComparison& cmp) {
  const auto& dims = cfg.get_ints("dims");
  const int64_t n = cfg.get_int("pairs");
  ctx.section(fmt::format("Var(q . k) against d_k ({} sampled pairs per d_k)", n));
  Table t("q, k with independent N(0,1) entries",
          {"d_k", "Var(q . k)", "Var(q . k / sqrt(d_k))", "relative std. error"});
  std::vector<double> xs, unscaled, scaled;
  for (int64_t d : dims) {
    const double dd = static_cast<double>(d), v = dot_variance(d, n, gen);
    xs.push_back(dd);
    unscaled.push_back(v);
    scaled.push_back(v / dd);  // the same samples divided by sqrt(d) before squaring
    t.add_row({std::to_string(d), fixed(v, 2), fixed(v / dd, 4),
               fixed(std::sqrt((2 + 6 / dd) / static_cast<double>(n)), 4)});
  }
  ctx.table(t);
  const double slope_u = log_log_slope(xs, unscaled), slope_s = log_log_slope(xs, scaled);
  const double se = slope_stderr(xs, n);
  ctx.result("dims", dims);
  ctx.result("var_unscaled", unscaled);
  ctx.result("var_scaled", scaled);
  ctx.result("slope_unscaled", slope_u);
  ctx.result("slope_scaled", slope_s);
  ctx.result("slope_stderr", se);
  ctx.note(fmt::format(
      "Fitted log-log slope: {:.4f} unscaled, {:.4f} scaled (standard error {:.4f} from the "
      "sampling, so the document's 1 and 0 are {:.1f} and {:.1f} standard errors away). The "
      "two slopes differ by exactly 1 because the scaled scores are the same samples divided "
      "by sqrt(d_k).",
      slope_u, slope_s, se, std::abs(slope_u - 1) / se, std::abs(slope_s) / se));
  cmp.add("slope of log Var(q . k) on log d_k (Var = d_k)", 1.0, slope_u, 5 * se,
          "beyond 5 sampling standard errors", 3);
  cmp.add("slope after dividing by sqrt(d_k) (Var = 1)", 0.0, slope_s, 5 * se,
          "beyond 5 sampling standard errors", 3);

  LinePlot p;
  p.series = {{"q . k", xs, unscaled}, {"q . k / sqrt(d_k)", xs, scaled}};
  p.refs = {{RefLine::kHorizontal, 1, "variance 1"}};
  p.log_x = p.log_y = true;
  p.title = fmt::format("Var(q . k): slope {:.3f} unscaled, {:.3f} scaled", slope_u, slope_s);
  p.x_label = "d_k";
  p.y_label = "variance over sampled pairs";
  ctx.figure("variance", line_plot_svg(p), "The dot product's variance grows like d_k");
}

void softmax_part(const Config& cfg, RunContext& ctx, Generator& gen, DocumentComparison& cmp) {
  const auto& dims = cfg.get_ints("dims");
  const int64_t keys = cfg.get_int("keys"), trials = cfg.get_int("trials");
  ctx.section(
      fmt::format("The softmax over {} keys and its gradient, against d_k ({} queries "
                  "each)",
                  keys, trials));
  Table t("Means over queries; the gradients come from the tape's backward",
          {"d_k", "entropy (1)", "entropy (1/sqrt d)", "max weight (1)", "max weight (1/sqrt d)",
           "|dL/dz| (1)", "|dL/dz| (1/sqrt d)", "|dL/dq| (1)", "|dL/dq| (1/sqrt d)"});
  std::vector<double> xs;
  std::vector<SoftmaxStats> raw, sc;
  for (int64_t d : dims) {
    const double dd = static_cast<double>(d);
    raw.push_back(softmax_stats(d, keys, trials, 1.0, gen));
    sc.push_back(softmax_stats(d, keys, trials, 1 / std::sqrt(dd), gen));
    xs.push_back(dd);
    t.add_row({std::to_string(d), fixed(raw.back().entropy, 3), fixed(sc.back().entropy, 3),
               fixed(raw.back().max_weight, 3), fixed(sc.back().max_weight, 3),
               sig(raw.back().grad_scores, 3), sig(sc.back().grad_scores, 3),
               sig(raw.back().grad_q, 3), sig(sc.back().grad_q, 3)});
  }
  ctx.table(t);
  auto column = [](const std::vector<SoftmaxStats>& v, double SoftmaxStats::*f) {
    std::vector<double> out;
    for (const auto& s : v) out.push_back(s.*f);
    return out;
  };
  const auto ent_u = column(raw, &SoftmaxStats::entropy),
             ent_s = column(sc, &SoftmaxStats::entropy);
  const auto max_u = column(raw, &SoftmaxStats::max_weight),
             max_s = column(sc, &SoftmaxStats::max_weight);
  const auto gz_u = column(raw, &SoftmaxStats::grad_scores),
             gz_s = column(sc, &SoftmaxStats::grad_scores);
  const auto gq_u = column(raw, &SoftmaxStats::grad_q), gq_s = column(sc, &SoftmaxStats::grad_q);
  ctx.result("entropy_unscaled", ent_u);
  ctx.result("entropy_scaled", ent_s);
  ctx.result("max_weight_unscaled", max_u);
  ctx.result("max_weight_scaled", max_s);
  ctx.result("grad_scores_unscaled", gz_u);
  ctx.result("grad_scores_scaled", gz_s);
  ctx.result("grad_q_unscaled", gq_u);
  ctx.result("grad_q_scaled", gq_s);
  const double uniform = std::log(static_cast<double>(keys));
  ctx.result("entropy_uniform", uniform);
  ctx.note(fmt::format(
      "Unscaled, the softmax collapses as d_k grows: entropy {:.3f} -> {:.3f} nats (uniform: "
      "{:.3f}), largest weight {:.3f} -> {:.3f}, and the gradient reaching the scores falls "
      "from {:.3g} to {:.3g}. Scaled, the entropy stays between {:.3f} and {:.3f} and the "
      "gradient between {:.3g} and {:.3g}. The gradient that reaches q is another matter: "
      "dL/dq = s K^T dL/dz, and without s the keys' length sqrt(d_k) multiplies it, so "
      "unscaled it goes from {:.3g} to {:.3g} (scaled {:.3g} to {:.3g}). {}",
      ent_u.front(), ent_u.back(), uniform, max_u.front(), max_u.back(), gz_u.front(), gz_u.back(),
      *std::min_element(ent_s.begin(), ent_s.end()), *std::max_element(ent_s.begin(), ent_s.end()),
      *std::min_element(gz_s.begin(), gz_s.end()), *std::max_element(gz_s.begin(), gz_s.end()),
      gq_u.front(), gq_u.back(), gq_s.front(), gq_s.back(),
      gq_u.back() >= gq_s.back()
          ? "What the missing factor costs here is a softmax that has already picked one key, "
            "not a small gradient."
          : "Here q's gradient is smaller without the factor too."));
  cmp.add_exact("unscaled softmax tends to argmax (max weight > 0.9 at the largest d_k)", "yes",
                max_u.back() > 0.9 ? "yes" : "no",
                fmt::format("max weight {:.3f} at d_k = {}", max_u.back(), dims.back()));
  cmp.add_exact("unscaled: gradient reaching the scores shrinks as d_k grows", "yes",
                gz_u.back() < gz_u.front() ? "yes" : "no",
                fmt::format("{:.3g} at d_k = {}, {:.3g} at d_k = {}", gz_u.front(), dims.front(),
                            gz_u.back(), dims.back()));
  cmp.add_exact("scaled: gradient reaching the scores larger than unscaled (largest d_k)", "yes",
                gz_s.back() > gz_u.back() ? "yes" : "no",
                fmt::format("{:.3g} scaled vs {:.3g} unscaled", gz_s.back(), gz_u.back()));
  cmp.add_exact("unscaled: gradient reaching q vanishes (smaller than scaled, largest d_k)", "yes",
                gq_u.back() < gq_s.back() ? "yes" : "no",
                gq_u.back() < gq_s.back()
                    ? ""
                    : fmt::format("dL/dz shrinks, but dL/dq = K^T dL/dz carries |k| ~ sqrt(d_k): "
                                  "{:.3g} unscaled vs {:.3g} scaled at d_k = {}",
                                  gq_u.back(), gq_s.back(), dims.back()));

  LinePlot e;
  e.series = {{"entropy, unscaled", xs, ent_u},
              {"entropy, 1/sqrt(d_k)", xs, ent_s},
              {"max weight, unscaled", xs, max_u, "", true},
              {"max weight, 1/sqrt(d_k)", xs, max_s, "", true}};
  e.refs = {{RefLine::kHorizontal, uniform, "uniform entropy log T"}};
  e.log_x = true;
  e.title = fmt::format("Softmax over {} keys", keys);
  e.x_label = "d_k";
  e.y_label = "entropy (nats) / max weight";
  ctx.figure("softmax_saturation", line_plot_svg(e),
             "Without the factor the softmax becomes an argmax as d_k grows");
  LinePlot g;
  g.series = {{"|dL/dz|, unscaled", xs, gz_u},
              {"|dL/dz|, 1/sqrt(d_k)", xs, gz_s},
              {"|dL/dq|, unscaled", xs, gq_u, "", true},
              {"|dL/dq|, 1/sqrt(d_k)", xs, gq_s, "", true}};
  g.log_x = g.log_y = true;
  g.title = "Gradient norms from the backward pass";
  g.x_label = "d_k";
  g.y_label = "mean norm per query";
  ctx.figure("gradients", line_plot_svg(g), "A saturated softmax passes almost no gradient back");
}

void training_part(const Config& cfg, RunContext& ctx, DocumentComparison& cmp) {
  PairMemoryConfig pc;
  pc.d = cfg.get_int("train_dk");
  pc.pairs = cfg.get_int("recall_pairs");
  pc.steps = cfg.get_int("steps");
  pc.batch = cfg.get_int("batch");
  pc.lr = cfg.get_real("lr");
  pc.eval_every = cfg.get_int("eval_every");
  pc.eval_size = cfg.get_int("eval_size");
  ctx.section(
      fmt::format("Training at d_k = {}: associative recall ({} pairs), one attention "
                  "layer, {} Adam steps",
                  pc.d, pc.pairs, pc.steps));
  pc.scaled = true;
  const RecallRun with = train_pair_memory(pc, ctx.seed());
  pc.scaled = false;
  const RecallRun without = train_pair_memory(pc, ctx.seed());

  CsvWriter log = ctx.csv(
      "training", {"step", "loss_scaled", "loss_unscaled", "grad_wqk_scaled", "grad_wqk_unscaled"});
  std::vector<double> steps;
  for (size_t i = 0; i < with.losses.size(); ++i) {
    steps.push_back(static_cast<double>(i + 1));
    log.row({steps.back(), with.losses[i], without.losses[i], with.score_grad_norm[i],
             without.score_grad_norm[i]});
  }
  const double target = cfg.get_real("target");
  const double tail_s = tail_mean(with.losses, 0.1), tail_u = tail_mean(without.losses, 0.1);
  const double reach_s = first_step_at(with, target), reach_u = first_step_at(without, target);
  Table t("Same initial weights and batches", {"", "scaled 1/sqrt(d_k)", "unscaled"});
  t.add_row({"loss, mean of the last 10% of steps", sig(tail_s, 3), sig(tail_u, 3)});
  t.add_row({"held-out accuracy at the end", fixed(with.eval_accuracy.back(), 3),
             fixed(without.eval_accuracy.back(), 3)});
  t.add_row({fmt::format("first step with accuracy >= {:.2f}", target), step_text(reach_s),
             step_text(reach_u)});
  t.add_row({"attention entropy at step 0 (nats)", fixed(with.eval_entropy.front(), 3),
             fixed(without.eval_entropy.front(), 3)});
  t.add_row({"|dL/dW_q| + |dL/dW_k| at step 1", sig(with.score_grad_norm.front(), 3),
             sig(without.score_grad_norm.front(), 3)});
  t.add_row({"seconds", fixed(with.seconds, 1), fixed(without.seconds, 1)});
  ctx.table(t);
  ctx.result("train_tail_loss_scaled", tail_s);
  ctx.result("train_tail_loss_unscaled", tail_u);
  ctx.result("train_accuracy_scaled", with.eval_accuracy);
  ctx.result("train_accuracy_unscaled", without.eval_accuracy);
  ctx.result("train_eval_steps", with.eval_steps);
  ctx.result("train_first_loss_scaled", with.losses.front());
  ctx.result("train_first_loss_unscaled", without.losses.front());
  ctx.result("train_entropy_step0_scaled", with.eval_entropy.front());
  ctx.result("train_entropy_step0_unscaled", without.eval_entropy.front());
  ctx.result("train_grad_wqk_step1_scaled", with.score_grad_norm.front());
  ctx.result("train_grad_wqk_step1_unscaled", without.score_grad_norm.front());
  ctx.note(fmt::format(
      "Both runs start from the same weights; only the factor differs. At step 0 the unscaled "
      "scores put the attention at entropy {:.3f} nats against {:.3f} scaled (uniform over {} "
      "slots: {:.3f}). After {} steps the loss is {:.3g} scaled and {:.3g} unscaled (mean of "
      "the last 10%), and held-out accuracy {:.3f} against {:.3f}.",
      without.eval_entropy.front(), with.eval_entropy.front(), pc.pairs,
      std::log(static_cast<double>(pc.pairs)), pc.steps, tail_s, tail_u, with.eval_accuracy.back(),
      without.eval_accuracy.back()));
  const bool faster = tail_s < tail_u && with.eval_accuracy.back() >= without.eval_accuracy.back();
  cmp.add_exact(
      fmt::format("training at d_k = {}: the scaled model learns faster", pc.d), "yes",
      faster ? "yes" : "no",
      fmt::format("tail loss {:.3g} scaled vs {:.3g} unscaled; accuracy {:.3f} vs "
                  "{:.3f}",
                  tail_s, tail_u, with.eval_accuracy.back(), without.eval_accuracy.back()));
  const double g1_s = with.score_grad_norm.front(), g1_u = without.score_grad_norm.front();
  cmp.add_exact(
      fmt::format("training at d_k = {}: smaller gradient on W_q, W_k unscaled (step 1)", pc.d),
      "yes", g1_u < g1_s ? "yes" : "no",
      g1_u < g1_s ? ""
                  : fmt::format("{:.3g} unscaled vs {:.3g} scaled: what slows the "
                                "unscaled run is a softmax already committed to one "
                                "slot (entropy {:.3f} nats at step 0), not a small "
                                "gradient",
                                g1_u, g1_s, without.eval_entropy.front()));

  const size_t window = std::max<size_t>(1, with.losses.size() / 50);
  LinePlot p;
  p.series = {{"scaled, 1/sqrt(d_k)", steps, smooth(with.losses, window), "", false, false},
              {"unscaled", steps, smooth(without.losses, window), "", false, false}};
  p.log_y = true;
  p.title = fmt::format("Recall at d_k = {}: training loss ({}-step moving mean)", pc.d, window);
  p.x_label = "step";
  p.y_label = "cross-entropy";
  ctx.figure("training_loss", line_plot_svg(p), "The same model with and without 1/sqrt(d_k)");
  LinePlot a;
  a.series = {{"scaled, 1/sqrt(d_k)", with.eval_steps, with.eval_accuracy},
              {"unscaled", without.eval_steps, without.eval_accuracy}};
  a.title = "Held-out accuracy";
  a.x_label = "step";
  a.y_label = "accuracy";
  ctx.figure("training_accuracy", line_plot_svg(a), "Held-out recall accuracy during training");
}

// Before the run folder exists: a slope needs two different d_k.
void check(const Config& cfg) {
  const auto& dims = cfg.get_ints("dims");
  if (std::adjacent_find(dims.begin(), dims.end(), std::not_equal_to<>()) == dims.end())
    throw UsageError(
        fmt::format("scaling-variance: --dims needs at least two different values "
                    "to fit a slope, got {}",
                    fmt::join(dims, ",")));
}

void run(const Config& cfg, RunContext& ctx) {
  Generator gen(ctx.seed());
  DocumentComparison cmp("000 §II, 001, 003, 004 §2.5: why divide by sqrt(d_k)");
  variance_part(cfg, ctx, gen, cmp);
  softmax_part(cfg, ctx, gen, cmp);
  if (cfg.get_int("steps") > 0) training_part(cfg, ctx, cmp);
  ctx.compare(cmp);
}

}  // namespace

Experiment scaling_variance() {
  Experiment e;
  e.name = "scaling-variance";
  e.source = "000 §II, 001, 003, 004 §2.5";
  e.purpose =
      "Var(q . k) grows like d_k; what that does to the softmax, its gradient and "
      "training, with and without 1/sqrt(d_k)";
  e.typical_time = "~20 s";
  e.config.add_ints("dims", {4, 8, 16, 32, 64, 128, 256, 512, 1024}, "d_k values", {.min = 1})
      .add_int("pairs", 20000, "sampled (q, k) pairs per d_k", {.min = 2})
      .add_int("keys", 32, "keys per softmax row T", {.min = 2})
      .add_int("trials", 256, "queries per d_k for the softmax statistics", {.min = 1})
      .add_int("train_dk", 256, "d_k (= d_model, one head) of the training runs", {.min = 2})
      .add_int("recall_pairs", 8, "key-value pairs per recall example", {.min = 2})
      .add_int("steps", 600, "Adam steps per training run (0: skip the training)", {.min = 0})
      .add_int("batch", 64, "examples per step", {.min = 1})
      .add_real("lr", 1e-3, "Adam learning rate", {.min = 0})
      .add_int("eval_every", 25, "steps between held-out evaluations", {.min = 1})
      .add_int("eval_size", 512, "held-out examples", {.min = 1})
      .add_real("target", 0.9, "held-out accuracy whose first step the table reports", {.min = 0});
  e.quick = {{"dims", "4,16,64,256,1024"}, {"pairs", "4000"},   {"trials", "64"}, {"steps", "60"},
             {"eval_every", "20"},         {"eval_size", "128"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
