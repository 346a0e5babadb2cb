// qkv-identity [004 §2.1, §1.4]: why attention has W_Q and W_K at all. Without them (W_Q = W_K
// = I) the scores are X X^T / sqrt(d): symmetric, with each token's score against itself
// |x_i|^2 / sqrt(d) usually the largest in its row, so every token mostly attends to itself.
// How much, measured against the width d and against the size of the inputs; and 004's worked
// "I ate an apple" weights, which do not sum to 1.
//
//   attnlab run qkv-identity
//   attnlab run qkv-identity --tokens 16 --trials 500 --dims 2,8,32,128,512
//
// Rough model of the diagonal mass (dashed in the figures): for x with N(0, a^2) entries the
// self-score is about a^2 sqrt(d) and a cross score a^2 z with z ~ N(0,1), E[e^{a^2 z}] =
// e^{a^4/2}, so  A_ii ~ e^{a^2 sqrt(d)} / (e^{a^2 sqrt(d)} + (T-1) e^{a^4/2}).
#include "experiments/basics/qkv_tied_training.h"
#include "experiments/common/self_attention_stats.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// 004 §1.4: the weights of the query "an" over "I ate an apple", as printed.
const std::vector<std::string> kSentence{"I", "ate", "an", "apple"};
const std::vector<double> kDocAn{0.2, 0.1, 0.5, 0.3};
// 004 §1.3's other worked weights: the two "transformer" rows and the reading-time example
// (2 hours on each of five books and 1 on a sixth, of 11; printed to 2 decimals).
const std::vector<double> kDocTransformer1{0.7, 0.1, 0.1, 0.1};
const std::vector<double> kDocTransformer2{0.6, 0.1, 0.1, 0.2};
const std::vector<double> kDocBooks{0.18, 0.18, 0.18, 0.18, 0.18, 0.09};
const std::vector<double> kBookHours{2, 2, 2, 2, 2, 1};

double sum(const std::vector<double>& xs) {
  return std::accumulate(xs.begin(), xs.end(), 0.0);
}

double rough_diagonal(double a, double d, double t) {
  const double self = a * a * std::sqrt(d), cross = a * a * a * a / 2;
  return 1 / (1 + (t - 1) * std::exp(cross - self));
}

// Means over `trials` random inputs X (T,d) with N(0, a^2) entries.
struct Averages {
  double diagonal = 0, diagonal_is_max = 0, score_asymmetry = 0;
};

Averages average(int64_t t, int64_t d, double a, double scale, int64_t trials, Generator& gen) {
  Averages m;
  for (int64_t k = 0; k < trials; ++k) {
    const SelfAttentionStats s = self_attention_stats(Tensor::randn({t, d}, gen, a), scale);
    m.diagonal += s.mean_diagonal;
    m.diagonal_is_max += s.diagonal_is_max;
    m.score_asymmetry = std::max(m.score_asymmetry, s.score_asymmetry);
  }
  m.diagonal /= static_cast<double>(trials);
  m.diagonal_is_max /= static_cast<double>(trials);
  return m;
}

// What our softmax (the op every attention layer calls) makes of scores with the printed
// ratios, s_i = log w_i: softmax(s)_i = w_i / sum(w). The document prints weights, not the
// scores behind them; log w are the scores that reproduce its ratios, so this is the softmax
// row it could have printed (float32, as every attention row here).
std::vector<double> softmax_of_log(const std::vector<double>& w) {
  std::vector<real> scores;
  for (double x : w) scores.push_back(static_cast<real>(std::log(x)));
  const Tensor p = softmax(Var::constant(Tensor::from_vector(scores))).value();
  return std::vector<double>(p.data(), p.data() + p.numel());
}

void worked_examples(RunContext& ctx) {
  ctx.section("004's worked weights");
  const double doc_sum = sum(kDocAn);
  const std::vector<double> normalised = softmax_of_log(kDocAn);
  Table t("Query 'an' over \"I ate an apple\"", {"", "I", "ate", "an", "apple", "sum"});
  auto row = [&](const std::string& name, const std::vector<double>& w) {
    std::vector<std::string> cells{name};
    for (double x : w) cells.push_back(fixed(x, 3));
    cells.push_back(fixed(sum(w), 3));
    t.add_row(cells);
  };
  row("004 as printed", kDocAn);
  row("softmax of log w (our softmax)", normalised);
  ctx.table(t);
  ctx.result("doc_an_weights_sum", doc_sum);
  ctx.result("an_weights_normalised", normalised);
  ctx.note(fmt::format(
      "A softmax row sums to 1, and the printed row sums to {:.2f}. The softmax of log w divides "
      "by that sum, so it is the one softmax row that keeps the printed ratios (an : apple : I : "
      "ate = {:.0f} : {:.0f} : {:.0f} : {:.0f}); 'an' gets {:.3f}, not {:.1f}. Printed to one "
      "decimal, as 004 prints, that row reads {}: each printed weight may be off by up to 0.05, "
      "so four of them can sum to anything from 0.8 to 1.2.",
      doc_sum, 10 * kDocAn[2], 10 * kDocAn[3], 10 * kDocAn[0], 10 * kDocAn[1], normalised[2],
      kDocAn[2], format_numbers(normalised, 1)));

  // Every row: the printed weights beside our softmax row with the same ratios. A printed weight
  // is rounded to its last decimal, so half a unit of it is how far a true softmax row can lie
  // from the print: 0.05 at one decimal, 0.005 at two.
  DocumentComparison cmp("004 §1.3-1.4: worked attention weights (a softmax row, as printed?)");
  cmp.add("'an' row (I ate an apple): a softmax row to 1 decimal", kDocAn, normalised, 0.05,
          fmt::format("the printed weights sum to {:.2f}", doc_sum), 2);
  std::string ranking;
  for (size_t i : kit::ranking(normalised))
    ranking += (ranking.empty() ? "" : " > ") + kSentence[i];
  cmp.add_exact("'an' ranks itself, then apple, then I", "an > apple > I > ate", ranking);
  cmp.add("'transformer 1' row: a softmax row to 1 decimal", kDocTransformer1,
          softmax_of_log(kDocTransformer1), 0.05, "", 2);
  cmp.add("'transformer 2' row: a softmax row to 1 decimal", kDocTransformer2,
          softmax_of_log(kDocTransformer2), 0.05, "", 2);
  cmp.add(fmt::format("reading time {} h over {} h, normalised (to 2 decimals)",
                      fmt::join(kBookHours, ","), sum(kBookHours)),
          kDocBooks, softmax_of_log(kBookHours), 0.005, "", 2);
  ctx.compare(cmp);

  BarChart b;
  b.labels = kSentence;
  b.series = {{"004 as printed", kDocAn, ""}, {"normalised", normalised, ""}};
  b.title = "Query 'an': 004's weights and the same ratios summing to 1";
  b.y_label = "attention weight";
  ctx.figure("i_ate_an_apple", bar_chart_svg(b),
             fmt::format("004's row sums to {:.2f}; divided by its sum it becomes a softmax row",
                         doc_sum));
}

// ---- one example: the scores and weights of one random input ----
SelfAttentionStats one_example(int64_t t, int64_t d, Generator& gen, RunContext& ctx) {
  ctx.section(fmt::format("One input: T = {} random tokens, d = {}, W_Q = W_K = W_V = I", t, d));
  const SelfAttentionStats one =
      self_attention_stats(Tensor::randn({t, d}, gen), 1 / std::sqrt(double(d)));
  const auto labels = index_labels(t, "x");
  ctx.matrix("example_scores", one.scores, labels, labels, 2);
  ctx.matrix("example_weights", one.weights, labels, labels, 3);
  ctx.result("example_score_asymmetry", one.score_asymmetry);
  ctx.result("example_weight_asymmetry", one.weight_asymmetry);
  ctx.note(fmt::format(
      "Scores: max |S - S^T| = {:.3g} (x_i . x_j = x_j . x_i). Weights: max |A - A^T| = {:.3f}, "
      "because row i is divided by its own sum: A_ij = e^S_ij / Z_i but A_ji = e^S_ij / Z_j. The "
      "diagonal holds {:.3f} of each row on average; uniform would be {:.3f}.",
      one.score_asymmetry, one.weight_asymmetry, one.mean_diagonal, 1.0 / double(t)));
  Heatmap h =
      attention_heatmap(one.weights, labels, labels, fmt::format("softmax(X X^T / sqrt({}))", d));
  h.annotate = t <= 10;
  ctx.figure("example_weights", heatmap_svg(h), "Without projections each token attends to itself");
  return one;
}

// One point of a sweep (over the width d or the input scale a): the mean diagonal mass scaled
// by 1/sqrt(d) and unscaled, the rough model's, and the share of rows led by their own score.
struct SweepPoint {
  double x, scaled, unscaled, rough, led_by_own;
};

struct WidthSweep {
  std::vector<SweepPoint> points;
  double max_asymmetry = 0, asymmetry_bound = 0;  // max |S - S^T| and its rounding bound
};

// ---- against d: N(0,1) entries ----
WidthSweep against_width(
    int64_t t, int64_t trials, const Config& cfg, Generator& gen, RunContext& ctx) {
  ctx.section(
      fmt::format("Diagonal mass against d (T = {}, N(0,1) entries, {} draws each)", t, trials));
  Table td("Self-attention with W_Q = W_K = I",
           {"d", "diag. mass (scaled)", "rough model", "diag. mass (unscaled)",
            "rows led by own score", "max |S - S^T|"});
  WidthSweep w;
  for (int64_t d : cfg.get_ints("dims")) {
    const double dd = static_cast<double>(d);
    const Averages s = average(t, d, 1.0, 1 / std::sqrt(dd), trials, gen);
    const Averages u = average(t, d, 1.0, 1.0, trials, gen);
    w.points.push_back(
        {dd, s.diagonal, u.diagonal, rough_diagonal(1, dd, double(t)), s.diagonal_is_max});
    w.max_asymmetry = std::max(w.max_asymmetry, s.score_asymmetry);
    // A dot product of d float32 products: |error| <~ d eps sum |x_i x_j|, here <~ d eps d
    // (entries ~ 1) times a margin of 8 for the tails; the scaled scores divide by sqrt(d).
    w.asymmetry_bound = std::max(w.asymmetry_bound, 8 * dd * dd * 0x1p-23 / std::sqrt(dd));
    td.add_row({std::to_string(d), fixed(s.diagonal, 4), fixed(w.points.back().rough, 4),
                fixed(u.diagonal, 4), fixed(s.diagonal_is_max, 3), sig(s.score_asymmetry, 2)});
  }
  ctx.table(td);
  kit::record(ctx, {{"dims", cfg.get_ints("dims")},
                    {"diag_vs_d_scaled", kit::column(w.points, &SweepPoint::scaled)},
                    {"diag_vs_d_unscaled", kit::column(w.points, &SweepPoint::unscaled)},
                    {"diag_vs_d_rough_model", kit::column(w.points, &SweepPoint::rough)},
                    {"own_score_max_fraction", kit::column(w.points, &SweepPoint::led_by_own)},
                    {"score_asymmetry_max", w.max_asymmetry},
                    {"score_asymmetry_bound", w.asymmetry_bound}});
  return w;
}

// ---- against the size of the inputs: x ~ N(0, a^2), scaled by 1/sqrt(d) ----
std::vector<SweepPoint> against_scale(
    int64_t t, int64_t trials, const Config& cfg, Generator& gen, RunContext& ctx) {
  const int64_t norm_d = cfg.get_int("norm_dim");
  ctx.section(
      fmt::format("Diagonal mass against the input scale a (x ~ N(0, a^2), d = {})", norm_d));
  Table tn("Scaled by 1/sqrt(d)", {"a", "mean |x|", "diag. mass", "rough model"});
  std::vector<SweepPoint> points;
  const double nd = static_cast<double>(norm_d);
  for (double a : cfg.get_reals("input_scales")) {
    const Averages s = average(t, norm_d, a, 1 / std::sqrt(nd), trials, gen);
    points.push_back({a, s.diagonal, 0, rough_diagonal(a, nd, double(t)), s.diagonal_is_max});
    tn.add_row({fixed(a, 2), fixed(a * std::sqrt(nd), 2), fixed(s.diagonal, 4),
                fixed(points.back().rough, 4)});
  }
  ctx.table(tn);
  kit::record(ctx, {{"input_scales", cfg.get_reals("input_scales")},
                    {"diag_vs_scale", kit::column(points, &SweepPoint::scaled)},
                    {"diag_vs_scale_rough_model", kit::column(points, &SweepPoint::rough)}});
  return points;
}

void compare_with_documents(const SelfAttentionStats& one,
                            const WidthSweep& width,
                            const std::vector<SweepPoint>& by_scale,
                            RunContext& ctx) {
  const SweepPoint &narrow = width.points.front(), &wide = width.points.back();
  DocumentComparison cmp("004 §2.1: self-attention on raw embeddings");
  cmp.add_exact("X X^T is symmetric", "yes",
                kit::yes_no(width.max_asymmetry <= width.asymmetry_bound),
                fmt::format("max |S - S^T| = {:.3g} against a rounding bound of {:.3g}",
                            width.max_asymmetry, width.asymmetry_bound));
  cmp.add_exact("attention from i to j equals attention from j to i", "yes",
                kit::yes_no(one.weight_asymmetry < 1e-6),
                fmt::format("the scores are symmetric but the weights are not: each row has its "
                            "own softmax denominator (max |A - A^T| = {:.3f} in the example)",
                            one.weight_asymmetry));
  cmp.add_exact("the diagonal is always the largest in its row", "yes",
                kit::yes_no(narrow.led_by_own >= 1.0),
                fmt::format("at d = {} only {:.1f}% of rows are led by their own score; it "
                            "becomes near certain as d grows ({:.1f}% at d = {})",
                            narrow.x, 100 * narrow.led_by_own, 100 * wide.led_by_own, wide.x));
  cmp.add_exact("attention close to the identity matrix (largest d, N(0,1) inputs)", "yes",
                kit::yes_no(wide.scaled > 0.9),
                fmt::format("diagonal mass {:.3f} at d = {}; {:.3f} for inputs scaled by {:.2f}",
                            wide.scaled, wide.x, by_scale.front().scaled, by_scale.front().x));
  ctx.compare(cmp);
}

void plot_sweeps(int64_t t,
                 int64_t norm_d,
                 const WidthSweep& width,
                 const std::vector<SweepPoint>& by_scale,
                 RunContext& ctx) {
  const std::vector<double> xs = kit::column(width.points, &SweepPoint::x),
                            scales = kit::column(by_scale, &SweepPoint::x);
  const std::vector<RefLine> uniform = {{RefLine::kHorizontal, 1.0 / double(t), "uniform 1/T"}};
  const LinePlot p{
      .series = {{"scaled by 1/sqrt(d)", xs, kit::column(width.points, &SweepPoint::scaled)},
                 {"rough model", xs, kit::column(width.points, &SweepPoint::rough), "", true,
                  false},
                 {"unscaled", xs, kit::column(width.points, &SweepPoint::unscaled)},
                 {"rows led by own score", xs, kit::column(width.points, &SweepPoint::led_by_own)}},
      .refs = uniform,
      .title = fmt::format("Self-attention without projections, T = {}", t),
      .x_label = "width d",
      .y_label = "mean diagonal weight (share of rows)",
      .log_x = true};
  ctx.figure("diagonal_vs_d", line_plot_svg(p), "Wider random inputs attend to themselves more");
  const LinePlot q{.series = {{"measured", scales, kit::column(by_scale, &SweepPoint::scaled)},
                              {"rough model", scales, kit::column(by_scale, &SweepPoint::rough), "",
                               true, false}},
                   .refs = uniform,
                   .title = fmt::format("Input scale a (x ~ N(0, a^2)), d = {}, T = {}", norm_d, t),
                   .x_label = "input scale a",
                   .y_label = "mean diagonal weight",
                   .log_x = true};
  ctx.figure("diagonal_vs_scale", line_plot_svg(q),
             "Small inputs spread the attention; large ones make it the identity");
}

void run(const Config& cfg, RunContext& ctx) {
  const int64_t t = cfg.get_int("tokens"), trials = cfg.get_int("trials");
  Generator gen(ctx.seed());
  const SelfAttentionStats one = one_example(t, cfg.get_int("norm_dim"), gen, ctx);
  const WidthSweep width = against_width(t, trials, cfg, gen, ctx);
  const std::vector<SweepPoint> by_scale = against_scale(t, trials, cfg, gen, ctx);
  const auto first_led = std::find_if(width.points.begin(), width.points.end(),
                                      [](const SweepPoint& p) { return p.led_by_own == 1.0; });
  const SweepPoint &narrow = width.points.front(), &wide = width.points.back();
  ctx.note(fmt::format(
      "With N(0,1) entries the diagonal's share grows from {:.3f} at d = {} to {:.3f} at d = {}: "
      "the self-score |x|^2/sqrt(d) grows like sqrt(d) while cross scores stay O(1). Shrinking "
      "the inputs undoes it: at a = {:.2f} the diagonal holds {:.3f} (uniform {:.3f}). The "
      "diagonal is not always the row's largest score: a longer neighbour can beat a short "
      "vector's own score (x_i . x_j > |x_i|^2 needs only |x_j| cos > |x_i|); {}",
      narrow.scaled, narrow.x, wide.scaled, wide.x, by_scale.front().x, by_scale.front().scaled,
      1.0 / double(t),
      first_led != width.points.end()
          ? fmt::format("from d = {} on, every sampled row was led by its own score.", first_led->x)
          : std::string("at none of these widths did every sampled row have its own score "
                        "first.")));
  compare_with_documents(one, width, by_scale, ctx);
  plot_sweeps(t, cfg.get_int("norm_dim"), width, by_scale, ctx);
  worked_examples(ctx);
  const TiedStudy tied = tied_qk_study(cfg, ctx);
  DocumentComparison tied_cmp("004 §2.1 vs a layer trained with one matrix for Q and K");
  tied_qk_rows(tied, tied_cmp);
  ctx.compare(tied_cmp);
}

}  // namespace

Experiment qkv_identity() {
  Experiment e;
  e.name = "qkv-identity";
  e.source = "004 §2.1 (and the worked weights of §1.3-1.4)";
  e.purpose =
      "W_Q = W_K = I: symmetric scores, a heavy diagonal; and 004's weights that sum "
      "to 1.1";
  e.config.add_int("tokens", 8, "tokens per input T", {.min = 2})
      .add_ints("dims", {2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, "widths d to try", {.min = 1})
      .add_int("trials", 1000, "random inputs averaged per point", {.min = 1})
      .add_int("norm_dim", 64, "width d of the example and of the input-scale sweep", {.min = 1})
      .add_reals("input_scales", {0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0, 1.5},
                 "standard deviations a of the inputs' entries", {.min = 1e-6});
  add_tied_fields(e.config);
  e.quick = {
      {"dims", "2,16,256"}, {"trials", "40"}, {"input_scales", "0.1,0.3,1"}, {"tied_steps", "100"}};
  e.reference = true;  // the elementary ops of attention, as the document writes them
  e.run = run;
  return e;
}

}  // namespace attn::experiments
