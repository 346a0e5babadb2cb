// softmax-dispersion [004 §2.4, §2.5]: one "right" key whose logit sits a fixed gap g above
// N - 1 equal others. As N grows the right key's weight falls and the row's entropy rises: the
// attention disperses (§2.4, after "softmax is not enough"). §2.5's remedy multiplies the logits
// by log N / log m, m the training length: a temperature that sharpens as N grows. How far does
// it help?
//
//   attnlab run softmax-dispersion
//   attnlab run softmax-dispersion --gap 6 --train_length 16 --max_log2_n 20
//
// Closed forms, for a right-key logit x (= s g with the scale s) and 0 for the others:
//   p = max weight = e^x / (e^x + N - 1),   q = 1 - p = (N - 1) e^-x p, spread evenly
//   H = -p log p - q log(q / (N - 1)) = q x - log p          (since q / (N - 1) = e^-x p)
// Unscaled (s = 1), p ~ e^g / N: the max weight falls like 1/N and H -> log N.
// Scaled (s = log N / log m), e^x = N^a with a = g / log m, so for large N
//   p ~ N^(a - 1) when a < 1,  p -> 1/2 when a = 1 (g = log m),  p -> 1 when a > 1:
// the log-N temperature holds the max weight still at one gap only, and elsewhere slows its drift
// from N^-1 to N^(a - 1). Even at that gap H keeps growing: half the mass stays spread over
// N - 1 keys and adds q log(N - 1).
//
// Every weight is computed by the project's softmax op (the one inside attention) in float32
// and checked against the closed form within an a priori rounding bound (see `Bound`).
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "experiments/common/distribution.h"
#include "experiments/common/loglog.h"
#include "experiments/experiment.h"
#include "experiments/report/charts.h"
#include "experiments/run_context.h"

namespace attn::experiments {

namespace {

// Worst-case rounding of one softmax row of N floats, whatever the CPU's vector width or
// summation order: each exp within 2 ulp (4u, kernels/vec_math.h), the sum of N terms within
// gamma_(N-1) = (N-1)u / (1 - (N-1)u) (Higham, recursive summation in any order), then a
// reciprocal and a product (u each): a relative error below gamma_(N+10) on every weight. The
// entropy, computed in double from those weights, moves by at most that times (H + 1): dH =
// -sum_j (log p_j + 1) dp_j and sum_j p_j |log p_j + 1| <= H + 1 (plus the double sum's own
// rounding, n eps_double (H + 1) with room to spare).
struct Bound {
  double weight_rel, entropy_abs;
};

Bound rounding_bound(int64_t n, double h) {
  const double u = std::numeric_limits<real>::epsilon() / 2;
  const double k = static_cast<double>(n + 10) * u;
  const double rel = k / (1 - k);
  const double sum_in_double = static_cast<double>(n + 1) * std::numeric_limits<double>::epsilon();
  return {rel, (rel + sum_in_double) * (h + 1)};
}

// One row: the op's max weight and entropy beside the closed forms at the float logit it saw.
struct Point {
  double max_weight = 0, entropy = 0;           // from the softmax op (float32)
  double closed_max = 0, closed_entropy = 0;    // closed forms (double)
  double max_rel_error = 0, entropy_error = 0;  // |ours - closed| (relative for the max)
  Bound bound{};
};

Point measure(int64_t n, double logit) {
  Tensor x = Tensor::zeros({1, n});
  x[0] = static_cast<real>(logit);
  Tensor y;
  {
    NoGrad off;
    y = softmax(Var::constant(x)).value();
  }
  const double g = static_cast<double>(x[0]);  // the logit as stored, rounded to float
  Point pt;
  pt.max_weight = static_cast<double>(*std::max_element(y.data(), y.data() + n));
  pt.entropy = entropy(y.data(), n);
  const double rest = static_cast<double>(n - 1) * std::exp(-g);
  pt.closed_max = 1 / (1 + rest);
  pt.closed_entropy = rest * pt.closed_max * g - std::log(pt.closed_max);
  pt.max_rel_error = std::abs(pt.max_weight - pt.closed_max) / pt.closed_max;
  pt.entropy_error = std::abs(pt.entropy - pt.closed_entropy);
  pt.bound = rounding_bound(n, pt.closed_entropy);
  return pt;
}

// The curve over N for one gap, unscaled (s = 1) or with the log-N temperature.
struct Curve {
  std::vector<Point> points;
  std::vector<double> max_weight, entropy;
  double worst_error_over_bound = 0;  // max over N and both measures of error / bound
};

Curve sweep(const std::vector<double>& ns, double gap, double train_length, bool log_scaled) {
  Curve c;
  for (double nd : ns) {
    const double s = log_scaled ? std::log(nd) / std::log(train_length) : 1.0;
    const Point pt = measure(static_cast<int64_t>(nd), s * gap);
    c.points.push_back(pt);
    c.max_weight.push_back(pt.max_weight);
    c.entropy.push_back(pt.entropy);
    c.worst_error_over_bound =
        std::max({c.worst_error_over_bound, pt.max_rel_error / pt.bound.weight_rel,
                  pt.entropy_error / pt.bound.entropy_abs});
  }
  return c;
}

// The value of ys at x (x must be one of xs).
double at(const std::vector<double>& xs, const std::vector<double>& ys, double x) {
  const auto it = std::find(xs.begin(), xs.end(), x);
  if (it == xs.end()) throw Error(fmt::format("softmax-dispersion: N = {} was not computed", x));
  return ys[static_cast<size_t>(it - xs.begin())];
}

bool monotone(const std::vector<double>& ys, bool increasing) {
  for (size_t i = 1; i < ys.size(); ++i)
    if (increasing ? ys[i] <= ys[i - 1] : ys[i] >= ys[i - 1]) return false;
  return true;
}

LinePlot log_n_plot(const std::string& title, const std::string& y_label, double train_length) {
  LinePlot p;
  p.title = title;
  p.x_label = "number of keys N";
  p.y_label = y_label;
  p.log_x = true;
  p.refs = {
      {RefLine::kVertical, train_length, fmt::format("training length m = {:.0f}", train_length)}};
  return p;
}

void run(const Config& cfg, RunContext& ctx) {
  const double gap = cfg.get_real("gap");
  const auto m = static_cast<double>(cfg.get_int("train_length"));
  const int64_t top = cfg.get_int("max_log2_n");
  const std::vector<double> gaps = cfg.get_reals("gaps");
  if (m > std::ldexp(1.0, static_cast<int>(top)))
    throw UsageError(
        fmt::format("softmax-dispersion: --train_length {} is above the largest N "
                    "2^{} (--max_log2_n)",
                    m, top));
  if (std::ldexp(1.0, static_cast<int>(std::log2(m))) != m)
    throw UsageError(fmt::format(
        "softmax-dispersion: --train_length {} must be a power of two (N runs over them)", m));
  std::vector<double> ns;
  for (int64_t k = 1; k <= top; ++k) ns.push_back(std::ldexp(1.0, static_cast<int>(k)));
  const double n_max = ns.back();
  const double fixed_gap = std::log(m);  // the gap at which log N / log m holds p at ~1/2

  // ---- 1. the main gap: unscaled and log-N scaled, ours beside the closed form ----
  ctx.section(fmt::format("One right key, logit gap {} above N - 1 equal keys", gap));
  const Curve raw = sweep(ns, gap, m, false), scaled = sweep(ns, gap, m, true);
  Table t(
      fmt::format("Max weight and entropy (nats) against N; log-N scale = log N / log {:.0f}", m),
      {"N", "max weight", "closed form", "entropy", "closed form", "scaled: max weight",
       "closed form", "scaled: entropy", "closed form", "log N (uniform)"});
  for (size_t i = 0; i < ns.size(); ++i) {
    const Point &a = raw.points[i], &b = scaled.points[i];
    t.add_row({fmt::format("{:.0f}", ns[i]), sig(a.max_weight, 4), sig(a.closed_max, 4),
               fixed(a.entropy, 4), fixed(a.closed_entropy, 4), sig(b.max_weight, 4),
               sig(b.closed_max, 4), fixed(b.entropy, 4), fixed(b.closed_entropy, 4),
               fixed(std::log(ns[i]), 4)});
  }
  ctx.table(t);

  std::vector<double> err_max, err_h, bound_max, bound_h, closed_max, closed_h, closed_max_s,
      closed_h_s;
  for (const Curve* c : {&raw, &scaled})
    for (const Point& pt : c->points) {
      err_max.push_back(pt.max_rel_error);
      err_h.push_back(pt.entropy_error);
      bound_max.push_back(pt.bound.weight_rel);
      bound_h.push_back(pt.bound.entropy_abs);
    }
  for (size_t i = 0; i < ns.size(); ++i) {
    closed_max.push_back(raw.points[i].closed_max);
    closed_h.push_back(raw.points[i].closed_entropy);
    closed_max_s.push_back(scaled.points[i].closed_max);
    closed_h_s.push_back(scaled.points[i].closed_entropy);
  }
  const double worst = std::max(raw.worst_error_over_bound, scaled.worst_error_over_bound);
  ctx.result("n", ns);
  ctx.result("gap", gap);
  ctx.result("train_length", m);
  ctx.result("max_weight", raw.max_weight);
  ctx.result("entropy", raw.entropy);
  ctx.result("max_weight_scaled", scaled.max_weight);
  ctx.result("entropy_scaled", scaled.entropy);
  ctx.result("closed_max_weight", closed_max);
  ctx.result("closed_entropy", closed_h);
  ctx.result("closed_max_weight_scaled", closed_max_s);
  ctx.result("closed_entropy_scaled", closed_h_s);
  // errors and bounds: the unscaled N values first, then the scaled ones
  ctx.result("max_weight_rel_error", err_max);
  ctx.result("max_weight_rel_bound", bound_max);
  ctx.result("entropy_abs_error", err_h);
  ctx.result("entropy_abs_bound", bound_h);
  ctx.result("worst_error_over_bound", worst);
  ctx.note(fmt::format(
      "The softmax op (float32) against the closed forms p = e^x / (e^x + N - 1) and "
      "H = (1 - p) x - log p at the float logit x: worst relative error of the max weight "
      "{:.2g}, worst entropy error {:.2g} nats; the largest ratio of an error to its a priori "
      "float32 bound is {:.3f} (at most 1 on any CPU; the bound is loose because it allows for "
      "summing the N terms one by one).",
      *std::max_element(err_max.begin(), err_max.end()),
      *std::max_element(err_h.begin(), err_h.end()), worst));

  const double p_m = at(ns, raw.max_weight, m), p_top = at(ns, raw.max_weight, n_max);
  const double ps_m = at(ns, scaled.max_weight, m), ps_top = at(ns, scaled.max_weight, n_max);
  const double h_m = at(ns, raw.entropy, m), h_top = at(ns, raw.entropy, n_max);
  const double hs_m = at(ns, scaled.entropy, m), hs_top = at(ns, scaled.entropy, n_max);
  const double a = gap / std::log(m);
  // Growth exponents of the max weight over the top 4 octaves of N (log-log least squares).
  const double slope_raw = log_log_slope(ns, raw.max_weight, n_max / 16);
  const double slope_scaled = log_log_slope(ns, scaled.max_weight, n_max / 16);
  ctx.result("max_weight_ratio_top_over_m", p_top / p_m);
  ctx.result("max_weight_ratio_top_over_m_scaled", ps_top / ps_m);
  ctx.result("entropy_change_m_to_top", h_top - h_m);
  ctx.result("entropy_change_m_to_top_scaled", hs_top - hs_m);
  ctx.result("max_weight_slope", slope_raw);
  ctx.result("max_weight_slope_scaled", slope_scaled);
  ctx.result("asymptotic_slope_scaled", std::min(0.0, a - 1));
  ctx.result("fixed_point_gap", fixed_gap);
  ctx.note(fmt::format(
      "From N = {:.0f} to N = {:.0f}: unscaled, the max weight falls from {:.4f} to {:.3g} "
      "(x{:.3g}, slope {:.3f} on log-log axes over the top octaves; 1/N would be -1) and the "
      "entropy rises from {:.3f} to {:.3f} nats. With the logits times log N / log {:.0f} the max "
      "weight goes from {:.4f} to {:.4f} (x{:.3g}, slope {:.3f}; the large-N limit is "
      "min(0, g / log m - 1) = {:.3f}) and the entropy from {:.3f} to {:.3f}.",
      m, n_max, p_m, p_top, p_top / p_m, slope_raw, h_m, h_top, m, ps_m, ps_top, ps_top / ps_m,
      slope_scaled, std::min(0.0, a - 1), hs_m, hs_top));

  LinePlot pm = log_n_plot(fmt::format("Max weight, gap {}", gap), "weight of the right key", m);
  pm.log_y = true;
  pm.series = {{"unscaled (softmax op)", ns, raw.max_weight, "#f59e0b"},
               {"unscaled, closed form", ns, closed_max, "#f59e0b", true, false},
               {"logits x log N / log m", ns, scaled.max_weight, "#3b82f6"},
               {"scaled, closed form", ns, closed_max_s, "#3b82f6", true, false}};
  ctx.figure("max_weight", line_plot_svg(pm),
             "The right key's weight: falls like 1/N unscaled, held up by the log-N temperature");
  LinePlot ph = log_n_plot(fmt::format("Entropy, gap {}", gap), "entropy (nats)", m);
  std::vector<double> uniform;
  for (double n : ns) uniform.push_back(std::log(n));
  ph.series = {{"unscaled (softmax op)", ns, raw.entropy, "#f59e0b"},
               {"logits x log N / log m", ns, scaled.entropy, "#3b82f6"},
               {"log N (uniform over N keys)", ns, uniform, "#9ca3af", true, false}};
  ctx.figure("entropy", line_plot_svg(ph),
             "Row entropy: the log-N temperature slows its growth but does not stop it");

  // "Roughly constant": within a factor of 2 between the training length and the largest N.
  constexpr double kRoughly = 2;

  // ---- 2. the gap sweep: at which gaps does the log-N temperature hold the max weight? ----
  ctx.section("The log-N temperature at several gaps");
  Table ts(fmt::format("Max weight at N = {:.0f} and N = {:.0f}, logits x log N / log {:.0f} "
                       "(the max weight is held near 1/2 at gap log m = {:.3f})",
                       m, n_max, m, fixed_gap),
           {"gap", "g / log m", "unscaled: ratio", "scaled: max at m", "scaled: max at top",
            "scaled: ratio", "slope (top octaves)", "large-N limit", "entropy change"});
  LinePlot pg =
      log_n_plot("Max weight with the log-N temperature, by gap", "weight of the right key", m);
  pg.log_y = true;
  std::vector<double> sweep_ratio, sweep_slope, sweep_limit, sweep_dh;
  for (double g : gaps) {
    const Curve r = sweep(ns, g, m, false), s = sweep(ns, g, m, true);
    const double ratio = at(ns, s.max_weight, n_max) / at(ns, s.max_weight, m);
    const double slope = log_log_slope(ns, s.max_weight, n_max / 16);
    const double limit = std::min(0.0, g / std::log(m) - 1);
    const double dh = at(ns, s.entropy, n_max) - at(ns, s.entropy, m);
    ts.add_row({fmt::format("{}", g), fixed(g / std::log(m), 3),
                sig(at(ns, r.max_weight, n_max) / at(ns, r.max_weight, m), 3),
                fixed(at(ns, s.max_weight, m), 4), sig(at(ns, s.max_weight, n_max), 4),
                sig(ratio, 3), fixed(slope, 3), fixed(limit, 3), fixed(dh, 3)});
    sweep_ratio.push_back(ratio);
    sweep_slope.push_back(slope);
    sweep_limit.push_back(limit);
    sweep_dh.push_back(dh);
    pg.series.push_back({fmt::format("gap {}", g), ns, s.max_weight, ""});
    ctx.result(fmt::format("worst_error_over_bound_gap_{}", g),
               std::max(r.worst_error_over_bound, s.worst_error_over_bound));
  }
  ctx.table(ts);
  ctx.result("gaps", gaps);
  ctx.result("sweep_max_ratio_scaled", sweep_ratio);
  ctx.result("sweep_slope_scaled", sweep_slope);
  ctx.result("sweep_limit_slope_scaled", sweep_limit);
  ctx.result("sweep_entropy_change_scaled", sweep_dh);
  std::vector<std::string> held_at, lost_at;
  for (size_t i = 0; i < gaps.size(); ++i)
    (sweep_ratio[i] <= kRoughly && 1 / sweep_ratio[i] <= kRoughly ? held_at : lost_at)
        .push_back(fmt::format("{}", gaps[i]));
  ctx.note(fmt::format(
      "Within a factor of {} from N = {:.0f} to N = {:.0f}, the log-N temperature holds the max "
      "weight at gaps [{}] and not at [{}]. Where g / log m < 1 the max weight still falls, with "
      "a slope near g / log m - 1 instead of -1; where it is above 1 the row sharpens towards "
      "one-hot and the entropy falls.",
      kRoughly, m, n_max, fmt::join(held_at, ", "), fmt::join(lost_at, ", ")));
  ctx.figure("gap_sweep", line_plot_svg(pg),
             "Held flat near gap = log m; below it the max weight still drifts down");

  // ---- the document beside ours ----
  const bool held = ps_top / ps_m <= kRoughly && ps_m / ps_top <= kRoughly;
  DocumentComparison cmp("004 §2.4 (dispersion) and §2.5 (the log-N scale), checked");
  // Strictly, from one N to the next; at a very large gap the float32 weights stop resolving the
  // change, which the reason then shows.
  auto ends = [&](const std::vector<double>& ys) {
    return fmt::format("measured: {:.9g} at N = {:.0f}, {:.9g} at N = {:.0f} (float32 weights)",
                       ys.front(), ns.front(), ys.back(), n_max);
  };
  const bool falls = monotone(raw.max_weight, false), rises = monotone(raw.entropy, true);
  cmp.add_exact("at a fixed gap the max weight falls as N grows", "yes", falls ? "yes" : "no",
                falls ? "" : ends(raw.max_weight));
  cmp.add_exact("at a fixed gap the entropy rises as N grows", "yes", rises ? "yes" : "no",
                rises ? "" : ends(raw.entropy));
  cmp.add_exact(
      fmt::format("log-N scale holds the max weight (within x{} from N = {:.0f} to {:.0f})",
                  kRoughly, m, n_max),
      "yes", held ? "yes" : "no",
      held ? ""
           : fmt::format("measured: x{:.3g} at gap {}; the scale holds it only near gap log m = "
                         "{:.3f} (large-N slope min(0, g / log m - 1) = {:.3f})",
                         ps_top / ps_m, gap, fixed_gap, std::min(0.0, a - 1)));
  cmp.add_exact("log-N scale: entropy changes less than unscaled", "yes",
                std::abs(hs_top - hs_m) < std::abs(h_top - h_m) ? "yes" : "no");
  // "Entropy invariance": the change from m to the largest N, against no change; ok when the
  // scale removes at least 90% of the unscaled change.
  const double tol = 0.1 * std::abs(h_top - h_m);
  cmp.add(
      "log-N scale: entropy change from N = m to the largest N (nats; ok within 10% of unscaled)",
      0.0, hs_top - hs_m, tol,
      std::abs(hs_top - hs_m) <= tol
          ? ""
          : fmt::format("measured: the max weight ends at {:.3f}, and the other {:.3f} "
                        "of the mass is spread evenly over N - 1 keys and adds about "
                        "(1 - p) log(N - 1) = {:.3f} nats at N = {:.0f}; the unscaled change "
                        "is {:.3f}",
                        ps_top, 1 - ps_top, (1 - ps_top) * std::log(n_max - 1), n_max, h_top - h_m),
      3);
  ctx.compare(cmp);
}

}  // namespace

Experiment softmax_dispersion() {
  Experiment e;
  e.name = "softmax-dispersion";
  e.source = "004 §2.4, §2.5";
  e.purpose = "Softmax over N keys at a fixed logit gap disperses; the log-N temperature fix";
  e.typical_time = "< 1 s";
  e.config
      .add_real("gap", 4, "logit gap of the right key over the N - 1 others", {.min = 0, .max = 40})
      .add_int("train_length", 64, "m: the length where log N / log m = 1 (a power of two)",
               {.min = 2})
      .add_int("max_log2_n", 16, "N runs over the powers of two 2, 4, ..., 2^max_log2_n",
               {.min = 2, .max = 22})
      .add_reals("gaps", {1, 2, 4, 8}, "gaps of the sweep with the log-N temperature",
                 {.min = 0, .max = 40});
  e.quick = {{"max_log2_n", "12"}, {"gaps", "2,4,8"}};
  e.run = run;
  return e;
}

}  // namespace attn::experiments
