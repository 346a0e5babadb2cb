// emergence's report: the sizes table, the two metrics on one figure, the abruptness of each
// curve over seeds, and the comparison rows (emergence.h).
#include "experiments/kit/kit.h"
#include "experiments/kit/spread.h"
#include "experiments/scaling/emergence.h"

namespace attn::experiments {

double abruptness(const std::vector<double>& y) {
  double largest = 0, total = 0;
  for (size_t i = 0; i + 1 < y.size(); ++i) {
    const double step = std::abs(y[i + 1] - y[i]);
    largest = std::max(largest, step);
    total += step;
  }
  return total > 0 ? largest / total : NAN;
}

namespace {

using kit::Spread;

// The metrics of one model, as functions of its score.
double log_likelihood(const AdditionScore& s) {
  return -s.token_nll;  // mean log p(right digit), nats: rises towards 0
}
double token_probability(const AdditionScore& s) {
  return std::exp(-s.token_nll);  // the geometric mean of p(right digit), on exact match's scale
}

// The seed mean of a metric at every size.
template <class Metric>
std::vector<double> mean_curve(const EmergenceGrid& g, Metric metric) {
  return kit::column(g.points, [&](const std::vector<SizePoint>& size) {
    return kit::mean_of(
        kit::column(size, [&](const SizePoint& p) { return std::invoke(metric, p.score); }));
  });
}

// Each seed's abruptness of one metric, as a mean and a spread.
template <class Metric>
Spread abruptness_spread(const EmergenceGrid& g, Metric metric) {
  std::vector<double> a;
  for (size_t k = 0; k < g.points.front().size(); ++k)
    a.push_back(abruptness(seed_curve(g, k, metric)));
  return kit::spread_of(a);
}

std::vector<double> parameters(const EmergenceGrid& g) {
  return kit::column(g.points, [](const auto& size) { return size.front().parameters; });
}

// Exact match predicted from the per-token accuracy p as p^L (independent digits), as a metric.
auto predicted_exact(int64_t answer_length) {
  return [L = static_cast<double>(answer_length)](const AdditionScore& s) {
    return std::pow(s.token_accuracy, L);
  };
}

void report_table(const EmergenceGrid& g, RunContext& ctx) {
  const auto L = g.answer_length;
  Table t(fmt::format("Held-out scores by size (mean over {} seeds)", g.points.front().size()),
          {"d_model", "parameters", "exact match", "per-token accuracy p",
           fmt::format("p^{} (predicted exact match)", L), "per-token log-likelihood (nats)"});
  const auto em = mean_curve(g, &AdditionScore::exact_match);
  const auto acc = mean_curve(g, &AdditionScore::token_accuracy);
  const auto ll = mean_curve(g, log_likelihood);
  const auto pred = mean_curve(g, predicted_exact(L));
  for (size_t i = 0; i < g.points.size(); ++i)
    t.add_row({std::to_string(g.points[i].front().d_model),
               std::to_string(g.points[i].front().parameters), fixed(em[i]), fixed(acc[i]),
               fixed(pred[i]), fixed(ll[i])});
  ctx.table(t);
  kit::record(ctx, {{"answer_length", L},
                    {"parameters", parameters(g)},
                    {"exact_match", em},
                    {"token_accuracy", acc},
                    {"token_log_likelihood", ll},
                    {"predicted_exact_match", pred}});
}

void figure(const EmergenceGrid& g, RunContext& ctx) {
  const auto L = g.answer_length;
  LinePlot p = kit::line_plot("The same models, two metrics (mean over seeds)", "parameters",
                              "held-out score", kit::Axes::kLogX);
  const auto n = parameters(g);
  p.series = {{"exact match (whole answer right)", n, mean_curve(g, &AdditionScore::exact_match)},
              {"per-token probability of the right digit, exp(log-likelihood)", n,
               mean_curve(g, token_probability)},
              {"per-token accuracy p", n, mean_curve(g, &AdditionScore::token_accuracy)},
              {fmt::format("p^{}: exact match predicted from p", L), n,
               mean_curve(g, predicted_exact(L)), "", true}};
  ctx.figure("emergence", line_plot_svg(p),
             "Exact match against the per-token metrics of the same models, by size");
}

// "yes" when the seeds' mean is above `threshold` by more than `tolerance`, "no" when below by
// more; the row is not judged in between (the seeds do not agree on the side).
Comparison& add_side(DocumentComparison& cmp,
                     const std::string& name,
                     const std::string& document,
                     const Spread& s,
                     double threshold,
                     double tolerance,
                     const std::string& reason) {
  Comparison& row = cmp.add_exact(name, document, kit::yes_no(s.mean > threshold), reason);
  row.not_judged_if(std::isnan(s.mean), "a curve did not move (its abruptness is undefined)");
  row.not_judged_if(std::abs(s.mean - threshold) <= tolerance,
                    fmt::format("{} ± {} (3 sd over seeds) straddles {}", fixed(s.mean),
                                fixed(tolerance), fixed(threshold)));
  return row;
}

// em, ll: the abruptness of exact match and of the per-token log-likelihood.
void compare(const EmergenceGrid& g, const Spread& em, const Spread& ll, RunContext& ctx) {
  const size_t seeds = g.points.front().size();
  const auto L = g.answer_length;
  // Seed by seed: exact match's abruptness minus the log-likelihood's.
  std::vector<double> gap;
  for (size_t k = 0; k < seeds; ++k)
    gap.push_back(abruptness(seed_curve(g, k, &AdditionScore::exact_match)) -
                  abruptness(seed_curve(g, k, log_likelihood)));
  const Spread d = kit::spread_of(gap);
  // p^L against exact match: the tolerance is 3 sd over seeds of (exact match - p^L), the largest
  // over sizes, and never below 3 standard errors of a rate on eval_size problems.
  const auto predicted = predicted_exact(L);
  double sd_gap = 0;
  for (size_t i = 0; i < g.points.size(); ++i) {
    std::vector<double> diff;
    for (const SizePoint& p : g.points[i]) diff.push_back(p.score.exact_match - predicted(p.score));
    sd_gap = std::max(sd_gap, kit::spread_of(diff).sd);
  }
  const double three_se = 1.5 / std::sqrt(static_cast<double>(g.eval_size));
  const std::vector<double> em_mean = mean_curve(g, &AdditionScore::exact_match);
  const std::vector<double> pred_mean = mean_curve(g, predicted);
  const double largest = em_mean.back();
  const bool one_seed = seeds < 2;

  DocumentComparison cmp(
      fmt::format("003 \"Scaling laws and emergent abilities\" and the metric-choice account vs "
                  "ours ({} sizes, "
                  "mean of {} seeds)",
                  g.points.size(), seeds));
  add_side(cmp,
           "exact match appears suddenly: one step between adjacent sizes holds over half "
           "its rise (003)",
           "yes", em, 0.5, 3 * em.sd, "exact match rises over several sizes")
      .needs_training(largest, three_se, "largest model's exact match")
      .not_judged_if(one_seed, "one seed: no spread");
  add_side(cmp,
           "per-token log-likelihood moves mostly in one step: over half its rise between two "
           "adjacent sizes (metric-choice account: no, it improves smoothly)",
           "no", ll, 0.5, 3 * ll.sd, "the log-likelihood moves mostly in one step")
      .not_judged_if(one_seed, "one seed: no spread");
  add_side(cmp, "exact match is more abrupt than per-token log-likelihood (metric-choice account)",
           "yes", d, 0.0, 3 * d.sd, "the per-token metric is at least as abrupt as exact match")
      .needs_training(largest, three_se, "largest model's exact match")
      .not_judged_if(one_seed, "one seed: no spread");
  const bool prediction_holds =
      cmp.add(fmt::format("exact match at each size vs p^{} from per-token accuracy p (document "
                          "column: p^{} of this run)",
                          L, L),
              pred_mean, em_mean, std::max(3 * sd_gap, three_se),
              kit::mean_of(em_mean) > kit::mean_of(pred_mean)
                  ? "errors cluster in the same problems (carry chains), so more answers are "
                    "wholly right than independent digits would give"
                  : "errors spread over more problems than independent digits would give")
          .needs_training(largest, three_se, "largest model's exact match")
          .not_judged_if(one_seed, "one seed: no spread")
          .agrees;
  cmp.add_exact(
         "loss curves tell almost nothing about the ability: p^L does not predict exact "
         "match (003 Big Ideas)",
         "yes", kit::yes_no(!prediction_holds),
         "the per-token accuracy predicts exact match as p^L: the jump is foretold")
      .needs_training(largest, three_se, "largest model's exact match")
      .not_judged_if(one_seed, "one seed: no spread");
  ctx.compare(cmp);
}

}  // namespace

void report_emergence(const EmergenceGrid& g, RunContext& ctx) {
  report_table(g, ctx);
  figure(g, ctx);
  const Spread em = abruptness_spread(g, &AdditionScore::exact_match);
  const Spread ll = abruptness_spread(g, log_likelihood);
  const Spread acc = abruptness_spread(g, &AdditionScore::token_accuracy);
  kit::record(ctx, {{"abruptness_exact_match", em.mean},
                    {"abruptness_exact_match_sd", em.sd},
                    {"abruptness_log_likelihood", ll.mean},
                    {"abruptness_log_likelihood_sd", ll.sd},
                    {"abruptness_token_accuracy", acc.mean},
                    {"abruptness_token_accuracy_sd", acc.sd}});
  ctx.note(
      fmt::format("Abruptness (largest step / whole movement; {} = equal steps): exact match "
                  "{} ± {}, per-token log-likelihood {} ± {}, per-token accuracy {} ± {}",
                  fixed(1.0 / static_cast<double>(g.points.size() - 1)), fixed(em.mean),
                  fixed(em.sd), fixed(ll.mean), fixed(ll.sd), fixed(acc.mean), fixed(acc.sd)));
  compare(g, em, ll, ctx);
}

}  // namespace attn::experiments
