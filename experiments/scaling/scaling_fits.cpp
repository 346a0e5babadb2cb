#include "experiments/scaling/scaling_fits.h"

#include "experiments/common/compute_frontier.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

double nonemb(const Runs& runs, size_t i) {
  return static_cast<double>(runs[i].front().non_embedding_params);
}

std::string interval_text(const Interval& i, int precision) {
  return fmt::format("[{:.{}f}, {:.{}f}]", i.lo, precision, i.hi, precision);
}

namespace {

// One bootstrap draw: groups of held-out windows (shared by every size) and, per size, seeds.
struct Draw {
  std::vector<size_t> groups;
  std::vector<std::vector<size_t>> seeds;
};

Draw make_draw(const Runs& runs, Generator* gen) {
  Draw d;
  const size_t groups = runs.front().front().group_loss.front().size();
  for (size_t g = 0; g < groups; ++g)
    d.groups.push_back(gen ? static_cast<size_t>(gen->randint(static_cast<int64_t>(groups))) : g);
  for (const auto& size : runs) {
    std::vector<size_t> s;
    for (size_t k = 0; k < size.size(); ++k)
      s.push_back(gen ? static_cast<size_t>(gen->randint(static_cast<int64_t>(size.size()))) : k);
    d.seeds.push_back(s);
  }
  return d;
}

// Size i's held-out loss at checkpoint j under a draw: the mean over the drawn seeds of the mean
// over the drawn groups.
double drawn_loss(const Runs& runs, const Draw& d, size_t i, size_t j) {
  double total = 0;
  for (size_t k : d.seeds[i])
    for (size_t g : d.groups) total += runs[i][k].group_loss[j][g];
  return total / static_cast<double>(d.seeds[i].size() * d.groups.size());
}

// Every size's loss at checkpoint j under a draw.
std::vector<double> losses_at(const Runs& runs, const Draw& d, size_t j) {
  std::vector<double> y;
  for (size_t i = 0; i < runs.size(); ++i) y.push_back(drawn_loss(runs, d, i, j));
  return y;
}

// The seed-mean loss curve of every size, under a draw, for the IsoFLOP profiles.
std::vector<LossCurve> loss_curves(const Runs& runs, const Draw& d) {
  std::vector<LossCurve> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    LossCurve c{nonemb(runs, i), {}, {}};
    for (size_t j = 0; j < runs[i].front().tokens.size(); ++j) {
      c.tokens.push_back(static_cast<double>(runs[i].front().tokens[j]));
      c.loss.push_back(drawn_loss(runs, d, i, j));
    }
    out.push_back(c);
  }
  return out;
}

// Budgets from the smallest C any curve reaches at its first checkpoint to the largest at its
// last, equally spaced in log.
std::vector<double> budgets(const std::vector<LossCurve>& curves, int n) {
  double lo = INFINITY, hi = 0;
  for (const auto& c : curves) {
    lo = std::min(lo, 6 * c.params * c.tokens.front());
    hi = std::max(hi, 6 * c.params * c.tokens.back());
  }
  return log_spaced(lo, hi, n);
}

// Slope of log N_opt against log C over the budgets with an interior optimum (NaN if < 2).
double frontier_slope(const std::vector<IsoFlop>& profiles) {
  std::vector<double> cs, ns;
  for (const auto& p : profiles)
    if (p.interior) cs.push_back(p.compute), ns.push_back(p.n_opt);
  return cs.size() >= 2 ? log_log_slope(cs, ns) : NAN;
}

// L(C) = a C^-gamma + c on the frontier's envelope: at each budget the lowest loss any size
// reaches there, refitted on every bootstrap draw of the curves. Unset below 3 budgets.
std::optional<BootstrapFit> fit_compute_law(const Runs& runs,
                                            const std::vector<IsoFlop>& profiles,
                                            const std::vector<double>& compute_budgets,
                                            int64_t replicates,
                                            Generator& gen) {
  if (profiles.size() < 3) return std::nullopt;
  auto column = [](const std::vector<IsoFlop>& ps, bool loss) {  // C, or the lowest loss at C
    std::vector<double> out;
    for (const IsoFlop& p : ps) out.push_back(loss ? p.points[p.best].loss : p.compute);
    return out;
  };
  const auto draw = [&](Generator* g) {
    if (!g) return column(profiles, true);
    return column(iso_flop_profiles(loss_curves(runs, make_draw(runs, g)), compute_budgets), true);
  };
  return bootstrap_power_law(column(profiles, false), draw, replicates, gen);
}

nlohmann::ordered_json fit_json(const BootstrapFit& b) {
  return {{"a", b.fit.a},
          {"exponent", b.fit.alpha},
          {"exponent_lo", b.alpha.lo},
          {"exponent_hi", b.alpha.hi},
          {"floor", b.fit.c},
          {"floor_lo", b.c.lo},
          {"floor_hi", b.c.hi},
          {"floor_clamped_at_zero", b.fit.c_clamped},
          {"rms_residual", b.fit.rms},
          {"r_squared", b.r_squared}};
}

// f at 60 log-spaced points from the first to the last of xs, as a dashed line without markers.
Series sampled(const std::string& name,
               const std::vector<double>& xs,
               const std::function<double(double)>& f,
               const std::string& colour = "") {
  Series s{name, {}, {}, colour, true, false};
  for (double x : log_spaced(xs.front(), xs.back(), 60)) {
    s.x.push_back(x);
    s.y.push_back(f(x));
  }
  return s;
}

}  // namespace

double mean_loss(const Runs& runs, size_t i, size_t j) {
  return drawn_loss(runs, make_draw(runs, nullptr), i, j);
}

// ---- loss against size --------------------------------------------------------------------------

void report_sizes(const Runs& runs, size_t last, const Config& cfg, RunContext& ctx) {
  Table t(fmt::format("Every size after {} steps, the token budget they share (loss: held-out "
                      "nats per character, mean over seeds)",
                      cfg.get_int("steps")),
          {"d_model", "layers", "heads", "N (non-embedding)", "all parameters", "tokens",
           "held-out loss", "seed spread", "trained on to (tokens)", "seconds per run"});
  nlohmann::ordered_json js = nlohmann::ordered_json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    const ScalingCurve& c = runs[i].front();
    const std::vector<double> per_seed =
        kit::column(runs[i], [&](const ScalingCurve& r) { return r.loss(last); });
    double secs = 0;
    for (const auto& r : runs[i]) secs += r.seconds / static_cast<double>(runs[i].size());
    const double loss = mean_loss(runs, i, last);
    t.add_row({std::to_string(c.d_model), std::to_string(c.layers),
               std::to_string(c.d_model / cfg.get_int("head_dim")),
               std::to_string(c.non_embedding_params), std::to_string(c.params),
               std::to_string(c.tokens[last]), fixed(loss, 4),
               runs[i].size() > 1 ? fixed(kit::max_of(per_seed) - kit::min_of(per_seed), 4) : "-",
               std::to_string(c.tokens.back()), fixed(secs, 1)});
    js.push_back({{"d_model", c.d_model},
                  {"layers", c.layers},
                  {"params", c.params},
                  {"non_embedding_params", c.non_embedding_params},
                  {"tokens", c.tokens[last]},
                  {"trained_tokens", c.tokens.back()},
                  {"final_loss", loss},
                  {"final_loss_per_seed", per_seed},
                  {"seconds_per_run", secs}});
  }
  ctx.table(t);
  ctx.result("sizes", js);
}

BootstrapFit fit_size_law(
    const Runs& runs, size_t last, const Config& cfg, Generator& gen, RunContext& ctx) {
  std::vector<double> n;
  for (size_t i = 0; i < runs.size(); ++i) n.push_back(nonemb(runs, i));
  const BootstrapFit b = bootstrap_power_law(
      n, [&](Generator* g) { return losses_at(runs, make_draw(runs, g), last); },
      cfg.get_int("bootstrap"), gen);
  // The measured losses, every seed and group.
  const std::vector<double> y = losses_at(runs, make_draw(runs, nullptr), last);
  ctx.note(fmt::format(
      "Fit L(N) = a N^(-alpha) + c over {} sizes: alpha = {:.3f} (95% bootstrap interval {}), "
      "floor c = {:.3f} nats (interval {}), R^2 = {:.4f}, rms residual {:.4f} nats. The floor is "
      "{:.0f}% of the smallest model's loss ({:.3f}) and {:.0f}% of the largest's ({:.3f}).{} "
      "The interval holds {}; it does not widen for the misfit of the 3-number law itself "
      "(the rms residual).",
      runs.size(), b.fit.alpha, interval_text(b.alpha), b.fit.c, interval_text(b.c), b.r_squared,
      b.fit.rms, 100 * b.fit.c / y.front(), y.front(), 100 * b.fit.c / y.back(), y.back(),
      b.fit.c_clamped ? " The best free floor was negative, so c is held at 0: at this token "
                        "budget the losses show no floor yet."
                      : "",
      cfg.get_int("seeds") > 1 ? "evaluation and seed noise" : "evaluation noise only"));
  LinePlot p = kit::line_plot("Held-out loss against model size", "non-embedding parameters N",
                              "held-out loss (nats per character)", kit::Axes::kLogLog);
  p.series = {{"measured (mean over seeds)", n, y},
              sampled("fit a N^-alpha + c", n, [&](double x) { return b.fit.at(x); })};
  p.refs = {{RefLine::kHorizontal, b.fit.c, "floor c"}};
  ctx.figure("loss_vs_params", line_plot_svg(p),
             fmt::format("Final held-out loss of every size with the fitted law (alpha {:.3f}, "
                         "c {:.3f}). On log axes the curve flattens towards the floor c.",
                         b.fit.alpha, b.fit.c));
  LinePlot q =
      kit::line_plot("Reducible loss L - c against model size", "non-embedding parameters N",
                     "L - c (nats per character)", kit::Axes::kLogLog);
  q.series = {{"measured L - c", n, kit::column(y, [&](double v) { return v - b.fit.c; })},
              sampled("a N^-alpha", n, [&](double x) { return b.fit.at(x) - b.fit.c; })};
  ctx.figure("reducible_loss_vs_params", line_plot_svg(q),
             fmt::format("With the fitted floor removed the law is a straight line of slope "
                         "-alpha = {:.3f} on log axes; points off the line are what the 3-number "
                         "law does not capture.",
                         -b.fit.alpha));
  ctx.result("fit_params", fit_json(b));
  ctx.result("alpha_n", b.fit.alpha);
  ctx.result("alpha_n_lo", b.alpha.lo);
  ctx.result("alpha_n_hi", b.alpha.hi);
  ctx.result("floor_n", b.fit.c);
  ctx.result("loss_smallest", y.front());
  ctx.result("loss_largest", y.back());
  return b;
}

// ---- loss against tokens ------------------------------------------------------------------------

BootstrapFit fit_data_law(const Runs& runs, const Config& cfg, Generator& gen, RunContext& ctx) {
  const size_t big = runs.size() - 1;
  const ScalingCurve& c = runs[big].front();
  // The points after twice the warm-up: before that the learning rate is still rising.
  std::vector<size_t> use;
  std::vector<double> d;
  for (size_t j = 0; j < c.steps.size(); ++j)
    if (c.steps[j] >= 2 * cfg.get_int("warmup")) {
      use.push_back(j);
      d.push_back(static_cast<double>(c.tokens[j]));
    }
  if (use.size() < 4)
    throw Error(fmt::format(
        "scaling-law: only {} evaluations after step {} (twice --warmup) to fit L(D); raise "
        "--eval_points or --steps",
        use.size(), 2 * cfg.get_int("warmup")));
  auto ys = [&](Generator* g) {
    const Draw dr = make_draw(runs, g);
    std::vector<double> y;
    for (size_t j : use) y.push_back(drawn_loss(runs, dr, big, j));
    return y;
  };
  const BootstrapFit b = bootstrap_power_law(d, ys, cfg.get_int("bootstrap"), gen);
  const double epochs = static_cast<double>(c.tokens.back()) / static_cast<double>(c.train_chars);
  ctx.note(fmt::format(
      "Fit L(D) = b D^(-beta) + c_D on the largest model (d_model {}, {} layers, N = {}) from "
      "step {} to {}: beta = {:.3f} (95% bootstrap interval {}), c_D = {:.3f} {}, R^2 = {:.4f}. "
      "D counts tokens processed; {} tokens are {:.1f} passes over the {}-character training "
      "text (about), so this is a training curve, not a larger dataset.",
      c.d_model, c.layers, c.non_embedding_params, c.steps[use.front()], c.steps.back(),
      b.fit.alpha, interval_text(b.alpha), b.fit.c, interval_text(b.c), b.r_squared,
      c.tokens.back(), epochs, c.train_chars));
  LinePlot p = kit::line_plot("Held-out loss against training tokens, every size",
                              "training tokens processed D", "held-out loss (nats per character)",
                              kit::Axes::kLogLog);
  const std::vector<LossCurve> curves = loss_curves(runs, make_draw(runs, nullptr));
  for (size_t i = 0; i < runs.size(); ++i)
    p.series.push_back({fmt::format("N = {}", runs[i].front().non_embedding_params),
                        curves[i].tokens, curves[i].loss, "", false, false});
  p.series.push_back(sampled(
      "fit b D^-beta + c_D (largest)", d, [&](double x) { return b.fit.at(x); }, "#000000"));
  ctx.figure("loss_vs_tokens", line_plot_svg(p),
             fmt::format("Each size's held-out loss as training goes on; dashed: the law fitted "
                         "to the largest model (beta {:.3f}, c_D {:.3f}).",
                         b.fit.alpha, b.fit.c));
  ctx.result("fit_tokens", fit_json(b));
  ctx.result("alpha_d", b.fit.alpha);
  ctx.result("alpha_d_lo", b.alpha.lo);
  ctx.result("alpha_d_hi", b.alpha.hi);
  ctx.result("floor_d", b.fit.c);
  return b;
}

// ---- the compute frontier -----------------------------------------------------------------------

namespace {

// N_opt against C with the fitted slope and slope 0.5, both through the points' geometric mean.
void frontier_figure(const std::vector<double>& opt_c,
                     const std::vector<double>& opt_n,
                     const Frontier& f,
                     size_t replicates,
                     const Config& cfg,
                     RunContext& ctx) {
  LinePlot p = kit::line_plot("Compute-optimal size against compute", "compute C = 6 N D (FLOPs)",
                              "N_opt (non-embedding parameters)", kit::Axes::kLogLog);
  Series fitted{fmt::format("fitted slope {:.2f}", f.slope), {}, {}, "", true, false};
  Series half{"slope 0.5 (N and D in proportion)", {}, {}, "#888888", true, false};
  // Both lines through the geometric mean of the measured points.
  double mx = 0, my = 0;
  for (size_t i = 0; i < opt_c.size(); ++i)
    mx += std::log(opt_c[i]) / opt_c.size(), my += std::log(opt_n[i]) / opt_c.size();
  for (double c : {opt_c.front(), opt_c.back()}) {
    fitted.x.push_back(c);
    fitted.y.push_back(std::exp(my + f.slope * (std::log(c) - mx)));
    half.x.push_back(c);
    half.y.push_back(std::exp(my + kProportionalExponent * (std::log(c) - mx)));
  }
  p.series = {{"N_opt from the IsoFLOP parabola", opt_c, opt_n}, fitted, half};
  ctx.figure(
      "frontier", line_plot_svg(p),
      fmt::format("N_opt ~ C^a with a = {:.2f} (95% bootstrap interval {}, over {} of "
                  "{} replicates with an interior optimum at two budgets or more).",
                  f.slope, interval_text(f.interval, 2), replicates, cfg.get_int("bootstrap")));
}

}  // namespace

Frontier compute_frontier(const Runs& runs, const Config& cfg, Generator& gen, RunContext& ctx) {
  Frontier f;
  const std::vector<LossCurve> curves = loss_curves(runs, make_draw(runs, nullptr));
  for (size_t i = 1; i < curves.size(); ++i)
    if (curves[i].params == curves[i - 1].params) {
      ctx.note(
          "Two sizes have the same N, so no IsoFLOP profile is read; give sizes of "
          "different 12 x layers x d_model^2.");
      return f;
    }
  const std::vector<double> cs = budgets(curves, static_cast<int>(cfg.get_int("budgets")));
  const std::vector<IsoFlop> profiles = iso_flop_profiles(curves, cs);
  f.slope = frontier_slope(profiles);
  f.budgets = static_cast<int64_t>(profiles.size());
  Table t("Compute budgets C = 6 N D: the size with the lowest held-out loss",
          {"C (FLOPs)", "sizes that reach it", "best N", "its D", "its loss", "N_opt (parabola)",
           "D_opt = C / 6 N_opt", "D_opt / N_opt"});
  LinePlot iso = kit::line_plot("IsoFLOP profiles: loss against size at a fixed compute budget",
                                "non-embedding parameters N", "held-out loss (nats per character)",
                                kit::Axes::kLogX);
  std::vector<double> opt_c, opt_n;
  nlohmann::ordered_json js = nlohmann::ordered_json::array();
  for (const auto& p : profiles) {
    const auto& b = p.points[p.best];
    Series s{fmt::format("C = {:.2g}", p.compute), {}, {}, "", !p.interior, true};
    for (const auto& pt : p.points) s.x.push_back(pt.params), s.y.push_back(pt.loss);
    iso.series.push_back(s);
    const double d_opt = p.interior ? p.compute / (6 * p.n_opt) : NAN;
    t.add_row({fmt::format("{:.3g}", p.compute), std::to_string(p.points.size()),
               fmt::format("{:.0f}", b.params), fmt::format("{:.0f}", b.tokens), fixed(b.loss, 4),
               p.interior ? fmt::format("{:.0f}", p.n_opt) : "at the edge",
               p.interior ? fmt::format("{:.0f}", d_opt) : "-",
               p.interior ? fmt::format("{:.1f}", d_opt / p.n_opt) : "-"});
    if (!p.interior) ++(p.best == 0 ? f.smallest_best : f.largest_best);
    if (p.interior) {
      ++f.interior;
      opt_c.push_back(p.compute);
      opt_n.push_back(p.n_opt);
    }
    js.push_back({{"compute", p.compute},
                  {"sizes", p.points.size()},
                  {"best_params", b.params},
                  {"best_tokens", b.tokens},
                  {"best_loss", b.loss},
                  {"interior", p.interior},
                  {"n_opt", finite_or_null(p.n_opt)}});
  }
  ctx.table(t);
  ctx.figure("isoflop", line_plot_svg(iso),
             "Each curve is one budget C: the loss every size reaches after D = C / 6N tokens. "
             "Its lowest point is the compute-optimal size; dashed curves have it at an end "
             "(the optimum may lie outside the sizes trained).");
  // The interval: the same bootstrap draws as the fits, each giving its own profiles.
  std::vector<double> slopes;
  for (int64_t r = 0; r < cfg.get_int("bootstrap"); ++r) {
    const double s =
        frontier_slope(iso_flop_profiles(loss_curves(runs, make_draw(runs, &gen)), cs));
    if (std::isfinite(s)) slopes.push_back(s);
  }
  if (!slopes.empty()) f.interval = percentile_interval(slopes);
  f.loss_law = fit_compute_law(runs, profiles, cs, cfg.get_int("bootstrap"), gen);
  if (f.loss_law) ctx.result("fit_compute", fit_json(*f.loss_law));
  if (opt_c.size() >= 2) frontier_figure(opt_c, opt_n, f, slopes.size(), cfg, ctx);
  ctx.note(fmt::format(
      "{} of {} budgets have their best size inside the trained range; over those, N_opt grows "
      "as C^{:.2f} (95% bootstrap interval {}).",
      f.interior, f.budgets, f.slope, interval_text(f.interval, 2)));
  ctx.result("frontier", js);
  ctx.result("frontier_slope", finite_or_null(f.slope));
  ctx.result("frontier_slope_lo", finite_or_null(f.interval.lo));
  ctx.result("frontier_slope_hi", finite_or_null(f.interval.hi));
  ctx.result("frontier_interior_budgets", f.interior);
  return f;
}

}  // namespace attn::experiments
