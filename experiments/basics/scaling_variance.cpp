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
#include "experiments/basics/scaling_variance_training.h"
#include "experiments/common/attention_steps.h"
#include "experiments/common/distribution.h"
#include "experiments/kit/kit.h"

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

// The mean over the rows of a (..., n) tensor of each row's Euclidean norm.
double mean_row_norm(const Tensor& t) {
  const int64_t n = t.size(-1), rows = t.numel() / n;
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double sq = 0;
    for (int64_t i = 0; i < n; ++i) sq += double(t[r * n + i]) * t[r * n + i];
    total += std::sqrt(sq);
  }
  return total / static_cast<double>(rows);
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
  s.grad_q = mean_row_norm(q.grad());
  // The same softmax from the scores z as a leaf: dL/dz = (diag(p) - p p^T) V u.
  Var z = Var::parameter(st.scores.value());
  sum(mul(matmul(softmax(z), v), u)).backward();
  s.grad_scores = mean_row_norm(z.grad());
  s.entropy = mean_row_entropy(w);
  s.max_weight = mean_row_max(w);
  return s;
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

  LinePlot p = kit::line_plot(
      fmt::format("Var(q . k): slope {:.3f} unscaled, {:.3f} scaled", slope_u, slope_s), "d_k",
      "variance over sampled pairs", kit::Axes::kLogLog);
  p.series = {{"q . k", xs, unscaled}, {"q . k / sqrt(d_k)", xs, scaled}};
  p.refs = {{RefLine::kHorizontal, 1, "variance 1"}};
  ctx.figure("variance", line_plot_svg(p), "The dot product's variance grows like d_k");
}

// Part 2's measurements as columns over d_k: unscaled (factor 1) and scaled by 1/sqrt(d_k).
struct SoftmaxColumns {
  std::vector<double> ent_u, ent_s, max_u, max_s, gz_u, gz_s, gq_u, gq_s;
};

SoftmaxColumns measure_softmax(const Config& cfg, Generator& gen, RunContext& ctx) {
  const int64_t keys = cfg.get_int("keys"), trials = cfg.get_int("trials");
  ctx.section(
      fmt::format("The softmax over {} keys and its gradient, against d_k ({} queries "
                  "each)",
                  keys, trials));
  Table t("Means over queries; the gradients come from the tape's backward",
          {"d_k", "entropy (1)", "entropy (1/sqrt d)", "max weight (1)", "max weight (1/sqrt d)",
           "|dL/dz| (1)", "|dL/dz| (1/sqrt d)", "|dL/dq| (1)", "|dL/dq| (1/sqrt d)"});
  std::vector<SoftmaxStats> raw, sc;
  for (int64_t d : cfg.get_ints("dims")) {
    const SoftmaxStats& r = raw.emplace_back(softmax_stats(d, keys, trials, 1.0, gen));
    const SoftmaxStats& c =
        sc.emplace_back(softmax_stats(d, keys, trials, 1 / std::sqrt(static_cast<double>(d)), gen));
    t.add_row({std::to_string(d), fixed(r.entropy, 3), fixed(c.entropy, 3), fixed(r.max_weight, 3),
               fixed(c.max_weight, 3), sig(r.grad_scores, 3), sig(c.grad_scores, 3),
               sig(r.grad_q, 3), sig(c.grad_q, 3)});
  }
  ctx.table(t);
  using S = SoftmaxStats;
  const SoftmaxColumns m{kit::column(raw, &S::entropy),     kit::column(sc, &S::entropy),
                         kit::column(raw, &S::max_weight),  kit::column(sc, &S::max_weight),
                         kit::column(raw, &S::grad_scores), kit::column(sc, &S::grad_scores),
                         kit::column(raw, &S::grad_q),      kit::column(sc, &S::grad_q)};
  const double uniform = std::log(static_cast<double>(keys));
  kit::record(ctx, {{"entropy_unscaled", m.ent_u},
                    {"entropy_scaled", m.ent_s},
                    {"max_weight_unscaled", m.max_u},
                    {"max_weight_scaled", m.max_s},
                    {"grad_scores_unscaled", m.gz_u},
                    {"grad_scores_scaled", m.gz_s},
                    {"grad_q_unscaled", m.gq_u},
                    {"grad_q_scaled", m.gq_s},
                    {"entropy_uniform", uniform}});
  ctx.note(fmt::format(
      "Unscaled, the softmax collapses as d_k grows: entropy {:.3f} -> {:.3f} nats (uniform: "
      "{:.3f}), largest weight {:.3f} -> {:.3f}, and the gradient reaching the scores falls "
      "from {:.3g} to {:.3g}. Scaled, the entropy stays between {:.3f} and {:.3f} and the "
      "gradient between {:.3g} and {:.3g}. The gradient that reaches q is another matter: "
      "dL/dq = s K^T dL/dz, and without s the keys' length sqrt(d_k) multiplies it, so "
      "unscaled it goes from {:.3g} to {:.3g} (scaled {:.3g} to {:.3g}). {}",
      m.ent_u.front(), m.ent_u.back(), uniform, m.max_u.front(), m.max_u.back(), m.gz_u.front(),
      m.gz_u.back(), kit::min_of(m.ent_s), kit::max_of(m.ent_s), kit::min_of(m.gz_s),
      kit::max_of(m.gz_s), m.gq_u.front(), m.gq_u.back(), m.gq_s.front(), m.gq_s.back(),
      m.gq_u.back() >= m.gq_s.back()
          ? "What the missing factor costs here is a softmax that has already picked one key, "
            "not a small gradient."
          : "Here q's gradient is smaller without the factor too."));
  return m;
}

void compare_softmax(const SoftmaxColumns& m,
                     const std::vector<int64_t>& dims,
                     DocumentComparison& cmp) {
  cmp.add_exact("unscaled softmax tends to argmax (max weight > 0.9 at the largest d_k)", "yes",
                kit::yes_no(m.max_u.back() > 0.9),
                fmt::format("max weight {:.3f} at d_k = {}", m.max_u.back(), dims.back()));
  cmp.add_exact("unscaled: gradient reaching the scores shrinks as d_k grows", "yes",
                kit::yes_no(m.gz_u.back() < m.gz_u.front()),
                fmt::format("{:.3g} at d_k = {}, {:.3g} at d_k = {}", m.gz_u.front(), dims.front(),
                            m.gz_u.back(), dims.back()));
  cmp.add_exact("scaled: gradient reaching the scores larger than unscaled (largest d_k)", "yes",
                kit::yes_no(m.gz_s.back() > m.gz_u.back()),
                fmt::format("{:.3g} scaled vs {:.3g} unscaled", m.gz_s.back(), m.gz_u.back()));
  const bool q_vanishes = m.gq_u.back() < m.gq_s.back();
  cmp.add_exact("unscaled: gradient reaching q vanishes (smaller than scaled, largest d_k)", "yes",
                kit::yes_no(q_vanishes),
                q_vanishes ? ""
                           : fmt::format("dL/dz shrinks, but dL/dq = K^T dL/dz carries |k| ~ "
                                         "sqrt(d_k): {:.3g} unscaled vs {:.3g} scaled at d_k = {}",
                                         m.gq_u.back(), m.gq_s.back(), dims.back()));
}

void softmax_part(const Config& cfg, RunContext& ctx, Generator& gen, DocumentComparison& cmp) {
  const SoftmaxColumns m = measure_softmax(cfg, gen, ctx);
  compare_softmax(m, cfg.get_ints("dims"), cmp);
  const std::vector<double> xs = kit::column(cfg.get_ints("dims"), [](int64_t d) { return d; });
  LinePlot e = kit::line_plot(fmt::format("Softmax over {} keys", cfg.get_int("keys")), "d_k",
                              "entropy (nats) / max weight", kit::Axes::kLogX);
  e.series = {{"entropy, unscaled", xs, m.ent_u},
              {"entropy, 1/sqrt(d_k)", xs, m.ent_s},
              {"max weight, unscaled", xs, m.max_u, "", true},
              {"max weight, 1/sqrt(d_k)", xs, m.max_s, "", true}};
  e.refs = {{RefLine::kHorizontal, std::log(static_cast<double>(cfg.get_int("keys"))),
             "uniform entropy log T"}};
  ctx.figure("softmax_saturation", line_plot_svg(e),
             "Without the factor the softmax becomes an argmax as d_k grows");
  LinePlot g = kit::line_plot("Gradient norms from the backward pass", "d_k", "mean norm per query",
                              kit::Axes::kLogLog);
  g.series = {{"|dL/dz|, unscaled", xs, m.gz_u},
              {"|dL/dz|, 1/sqrt(d_k)", xs, m.gz_s},
              {"|dL/dq|, unscaled", xs, m.gq_u, "", true},
              {"|dL/dq|, 1/sqrt(d_k)", xs, m.gq_s, "", true}};
  ctx.figure("gradients", line_plot_svg(g), "A saturated softmax passes almost no gradient back");
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
  if (cfg.get_int("steps") > 0) scaling_variance_training(cfg, ctx, cmp);
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
