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
#include "experiments/common/distribution.h"
#include "experiments/kit/kit.h"

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
  LinePlot p = kit::line_plot(title, "number of keys N", y_label, kit::Axes::kLogX);
  p.refs = {
      {RefLine::kVertical, train_length, fmt::format("training length m = {:.0f}", train_length)}};
  return p;
}

// The settings every part shares: the main gap, the training length m and the N swept.
struct Sweep {
  double gap = 0, m = 0;   // the main gap; the training length m (log N / log m = 1 at N = m)
  std::vector<double> ns;  // N = 2, 4, ..., 2^max_log2_n
  double n_max = 0;
  double fixed_gap = 0;  // log m: the gap at which log N / log m holds p at ~1/2
};

Sweep read_sweep(const Config& cfg) {
  Sweep w;
  w.gap = cfg.get_real("gap");
  w.m = static_cast<double>(cfg.get_int("train_length"));
  const int64_t top = cfg.get_int("max_log2_n");
  if (w.m > std::ldexp(1.0, static_cast<int>(top)))
    throw UsageError(
        fmt::format("softmax-dispersion: --train_length {} is above the largest N "
                    "2^{} (--max_log2_n)",
                    w.m, top));
  if (std::ldexp(1.0, static_cast<int>(std::log2(w.m))) != w.m)
    throw UsageError(fmt::format(
        "softmax-dispersion: --train_length {} must be a power of two (N runs over them)", w.m));
  for (int64_t k = 1; k <= top; ++k) w.ns.push_back(std::ldexp(1.0, static_cast<int>(k)));
  w.n_max = w.ns.back();
  w.fixed_gap = std::log(w.m);
  return w;
}

// A measure of one curve at N = m and at the largest N.
struct Ends {
  double at_m, at_top;
  double ratio() const { return at_top / at_m; }
  double change() const { return at_top - at_m; }
};

Ends ends(const Sweep& w, const std::vector<double>& ys) {
  return {at(w.ns, ys, w.m), at(w.ns, ys, w.n_max)};
}

// The main gap, unscaled and log-N scaled: ours beside the closed forms, and the rounding check.
void report_main_gap(const Sweep& w, const Curve& raw, const Curve& scaled, RunContext& ctx) {
  Table t(
      fmt::format("Max weight and entropy (nats) against N; log-N scale = log N / log {:.0f}", w.m),
      {"N", "max weight", "closed form", "entropy", "closed form", "scaled: max weight",
       "closed form", "scaled: entropy", "closed form", "log N (uniform)"});
  for (size_t i = 0; i < w.ns.size(); ++i) {
    const Point &a = raw.points[i], &b = scaled.points[i];
    t.add_row({fmt::format("{:.0f}", w.ns[i]), sig(a.max_weight, 4), sig(a.closed_max, 4),
               fixed(a.entropy, 4), fixed(a.closed_entropy, 4), sig(b.max_weight, 4),
               sig(b.closed_max, 4), fixed(b.entropy, 4), fixed(b.closed_entropy, 4),
               fixed(std::log(w.ns[i]), 4)});
  }
  ctx.table(t);
  // Errors and bounds: the unscaled N values first, then the scaled ones.
  std::vector<Point> both = raw.points;
  both.insert(both.end(), scaled.points.begin(), scaled.points.end());
  const std::vector<double> err_max = kit::column(both, &Point::max_rel_error),
                            err_h = kit::column(both, &Point::entropy_error);
  const double worst = std::max(raw.worst_error_over_bound, scaled.worst_error_over_bound);
  kit::record(ctx, {{"n", w.ns},
                    {"gap", w.gap},
                    {"train_length", w.m},
                    {"max_weight", raw.max_weight},
                    {"entropy", raw.entropy},
                    {"max_weight_scaled", scaled.max_weight},
                    {"entropy_scaled", scaled.entropy},
                    {"closed_max_weight", kit::column(raw.points, &Point::closed_max)},
                    {"closed_entropy", kit::column(raw.points, &Point::closed_entropy)},
                    {"closed_max_weight_scaled", kit::column(scaled.points, &Point::closed_max)},
                    {"closed_entropy_scaled", kit::column(scaled.points, &Point::closed_entropy)},
                    {"max_weight_rel_error", err_max},
                    {"max_weight_rel_bound",
                     kit::column(both, [](const Point& p) { return p.bound.weight_rel; })},
                    {"entropy_abs_error", err_h},
                    {"entropy_abs_bound",
                     kit::column(both, [](const Point& p) { return p.bound.entropy_abs; })},
                    {"worst_error_over_bound", worst}});
  ctx.note(fmt::format(
      "The softmax op (float32) against the closed forms p = e^x / (e^x + N - 1) and "
      "H = (1 - p) x - log p at the float logit x: worst relative error of the max weight "
      "{:.2g}, worst entropy error {:.2g} nats; the largest ratio of an error to its a priori "
      "float32 bound is {:.3f} (at most 1 on any CPU; the bound is loose because it allows for "
      "summing the N terms one by one).",
      kit::max_of(err_max), kit::max_of(err_h), worst));

  const Ends p = ends(w, raw.max_weight), ps = ends(w, scaled.max_weight);
  const Ends h = ends(w, raw.entropy), hs = ends(w, scaled.entropy);
  const double limit = std::min(0.0, w.gap / std::log(w.m) - 1);
  // Growth exponents of the max weight over the top 4 octaves of N (log-log least squares).
  const double slope_raw = log_log_slope(w.ns, raw.max_weight, w.n_max / 16);
  const double slope_scaled = log_log_slope(w.ns, scaled.max_weight, w.n_max / 16);
  kit::record(ctx, {{"max_weight_ratio_top_over_m", p.ratio()},
                    {"max_weight_ratio_top_over_m_scaled", ps.ratio()},
                    {"entropy_change_m_to_top", h.change()},
                    {"entropy_change_m_to_top_scaled", hs.change()},
                    {"max_weight_slope", slope_raw},
                    {"max_weight_slope_scaled", slope_scaled},
                    {"asymptotic_slope_scaled", limit},
                    {"fixed_point_gap", w.fixed_gap}});
  ctx.note(fmt::format(
      "From N = {:.0f} to N = {:.0f}: unscaled, the max weight falls from {:.4f} to {:.3g} "
      "(x{:.3g}, slope {:.3f} on log-log axes over the top octaves; 1/N would be -1) and the "
      "entropy rises from {:.3f} to {:.3f} nats. With the logits times log N / log {:.0f} the max "
      "weight goes from {:.4f} to {:.4f} (x{:.3g}, slope {:.3f}; the large-N limit is "
      "min(0, g / log m - 1) = {:.3f}) and the entropy from {:.3f} to {:.3f}.",
      w.m, w.n_max, p.at_m, p.at_top, p.ratio(), slope_raw, h.at_m, h.at_top, w.m, ps.at_m,
      ps.at_top, ps.ratio(), slope_scaled, limit, hs.at_m, hs.at_top));
}

void plot_main_gap(const Sweep& w, const Curve& raw, const Curve& scaled, RunContext& ctx) {
  LinePlot pm =
      log_n_plot(fmt::format("Max weight, gap {}", w.gap), "weight of the right key", w.m);
  pm.log_y = true;
  pm.series = {{"unscaled (softmax op)", w.ns, raw.max_weight, "#f59e0b"},
               {"unscaled, closed form", w.ns, kit::column(raw.points, &Point::closed_max),
                "#f59e0b", true, false},
               {"logits x log N / log m", w.ns, scaled.max_weight, "#3b82f6"},
               {"scaled, closed form", w.ns, kit::column(scaled.points, &Point::closed_max),
                "#3b82f6", true, false}};
  ctx.figure("max_weight", line_plot_svg(pm),
             "The right key's weight: falls like 1/N unscaled, held up by the log-N temperature");
  LinePlot ph = log_n_plot(fmt::format("Entropy, gap {}", w.gap), "entropy (nats)", w.m);
  const std::vector<double> uniform = kit::column(w.ns, [](double n) { return std::log(n); });
  ph.series = {{"unscaled (softmax op)", w.ns, raw.entropy, "#f59e0b"},
               {"logits x log N / log m", w.ns, scaled.entropy, "#3b82f6"},
               {"log N (uniform over N keys)", w.ns, uniform, "#9ca3af", true, false}};
  ctx.figure("entropy", line_plot_svg(ph),
             "Row entropy: the log-N temperature slows its growth but does not stop it");
}

// "Roughly constant": within a factor of 2 between the training length and the largest N.
constexpr double kRoughly = 2;

bool roughly_constant(double ratio) {
  return ratio <= kRoughly && 1 / ratio <= kRoughly;
}

// At which gaps does the log-N temperature hold the max weight?
void gap_sweep(const Sweep& w, const std::vector<double>& gaps, RunContext& ctx) {
  Table ts(fmt::format("Max weight at N = {:.0f} and N = {:.0f}, logits x log N / log {:.0f} "
                       "(the max weight is held near 1/2 at gap log m = {:.3f})",
                       w.m, w.n_max, w.m, w.fixed_gap),
           {"gap", "g / log m", "unscaled: ratio", "scaled: max at m", "scaled: max at top",
            "scaled: ratio", "slope (top octaves)", "large-N limit", "entropy change"});
  LinePlot pg =
      log_n_plot("Max weight with the log-N temperature, by gap", "weight of the right key", w.m);
  pg.log_y = true;
  std::vector<double> sweep_ratio, sweep_slope, sweep_limit, sweep_dh;
  std::vector<std::string> held_at, lost_at;
  for (double g : gaps) {
    const Curve r = sweep(w.ns, g, w.m, false), s = sweep(w.ns, g, w.m, true);
    const Ends sm = ends(w, s.max_weight);
    const double slope = log_log_slope(w.ns, s.max_weight, w.n_max / 16);
    const double limit = std::min(0.0, g / std::log(w.m) - 1);
    const double dh = ends(w, s.entropy).change();
    ts.add_row({fmt::format("{}", g), fixed(g / std::log(w.m), 3),
                sig(ends(w, r.max_weight).ratio(), 3), fixed(sm.at_m, 4), sig(sm.at_top, 4),
                sig(sm.ratio(), 3), fixed(slope, 3), fixed(limit, 3), fixed(dh, 3)});
    sweep_ratio.push_back(sm.ratio());
    sweep_slope.push_back(slope);
    sweep_limit.push_back(limit);
    sweep_dh.push_back(dh);
    (roughly_constant(sm.ratio()) ? held_at : lost_at).push_back(fmt::format("{}", g));
    pg.series.push_back({fmt::format("gap {}", g), w.ns, s.max_weight, ""});
    ctx.result(fmt::format("worst_error_over_bound_gap_{}", g),
               std::max(r.worst_error_over_bound, s.worst_error_over_bound));
  }
  ctx.table(ts);
  kit::record(ctx, {{"gaps", gaps},
                    {"sweep_max_ratio_scaled", sweep_ratio},
                    {"sweep_slope_scaled", sweep_slope},
                    {"sweep_limit_slope_scaled", sweep_limit},
                    {"sweep_entropy_change_scaled", sweep_dh}});
  ctx.note(fmt::format(
      "Within a factor of {} from N = {:.0f} to N = {:.0f}, the log-N temperature holds the max "
      "weight at gaps [{}] and not at [{}]. Where g / log m < 1 the max weight still falls, with "
      "a slope near g / log m - 1 instead of -1; where it is above 1 the row sharpens towards "
      "one-hot and the entropy falls.",
      kRoughly, w.m, w.n_max, fmt::join(held_at, ", "), fmt::join(lost_at, ", ")));
  ctx.figure("gap_sweep", line_plot_svg(pg),
             "Held flat near gap = log m; below it the max weight still drifts down");
}

void compare_with_documents(const Sweep& w,
                            const Curve& raw,
                            const Curve& scaled,
                            RunContext& ctx) {
  const Ends ps = ends(w, scaled.max_weight), h = ends(w, raw.entropy),
             hs = ends(w, scaled.entropy);
  const bool held = ps.ratio() <= kRoughly && ps.at_m / ps.at_top <= kRoughly;
  DocumentComparison cmp("004 §2.4 (dispersion) and §2.5 (the log-N scale), checked");
  // Strictly, from one N to the next; at a very large gap the float32 weights stop resolving the
  // change, which the reason then shows.
  auto measured_ends = [&](const std::vector<double>& ys) {
    return fmt::format("measured: {:.9g} at N = {:.0f}, {:.9g} at N = {:.0f} (float32 weights)",
                       ys.front(), w.ns.front(), ys.back(), w.n_max);
  };
  const bool falls = monotone(raw.max_weight, false), rises = monotone(raw.entropy, true);
  cmp.add_exact("at a fixed gap the max weight falls as N grows", "yes", kit::yes_no(falls),
                falls ? "" : measured_ends(raw.max_weight));
  cmp.add_exact("at a fixed gap the entropy rises as N grows", "yes", kit::yes_no(rises),
                rises ? "" : measured_ends(raw.entropy));
  cmp.add_exact(
      fmt::format("log-N scale holds the max weight (within x{} from N = {:.0f} to {:.0f})",
                  kRoughly, w.m, w.n_max),
      "yes", kit::yes_no(held),
      held ? ""
           : fmt::format("measured: x{:.3g} at gap {}; the scale holds it only near gap log m = "
                         "{:.3f} (large-N slope min(0, g / log m - 1) = {:.3f})",
                         ps.ratio(), w.gap, w.fixed_gap, std::min(0.0, w.gap / std::log(w.m) - 1)));
  cmp.add_exact("log-N scale: entropy changes less than unscaled", "yes",
                kit::yes_no(std::abs(hs.change()) < std::abs(h.change())));
  // "Entropy invariance": the change from m to the largest N, against no change; ok when the
  // scale removes at least 90% of the unscaled change.
  const double tol = 0.1 * std::abs(h.change());
  cmp.add(
      "log-N scale: entropy change from N = m to the largest N (nats; ok within 10% of unscaled)",
      0.0, hs.change(), tol,
      std::abs(hs.change()) <= tol
          ? ""
          : fmt::format("measured: the max weight ends at {:.3f}, and the other {:.3f} "
                        "of the mass is spread evenly over N - 1 keys and adds about "
                        "(1 - p) log(N - 1) = {:.3f} nats at N = {:.0f}; the unscaled change "
                        "is {:.3f}",
                        ps.at_top, 1 - ps.at_top, (1 - ps.at_top) * std::log(w.n_max - 1), w.n_max,
                        h.change()),
      3);
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  const Sweep w = read_sweep(cfg);
  ctx.section(fmt::format("One right key, logit gap {} above N - 1 equal keys", w.gap));
  const Curve raw = sweep(w.ns, w.gap, w.m, false), scaled = sweep(w.ns, w.gap, w.m, true);
  report_main_gap(w, raw, scaled, ctx);
  plot_main_gap(w, raw, scaled, ctx);
  ctx.section("The log-N temperature at several gaps");
  gap_sweep(w, cfg.get_reals("gaps"), ctx);
  compare_with_documents(w, raw, scaled, ctx);
}

}  // namespace

Experiment softmax_dispersion() {
  Experiment e;
  e.name = "softmax-dispersion";
  e.source = "004 §2.4, §2.5";
  e.purpose = "Softmax over N keys at a fixed logit gap disperses; the log-N temperature fix";
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
