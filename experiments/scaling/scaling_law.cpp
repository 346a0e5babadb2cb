// scaling-law [003 "GPT" and "Scaling laws and emergent abilities"]: does the held-out loss of a
// GPT character model fall as a power law in its size N and in the tokens D it has seen, and
// which size makes the best use of a fixed compute budget C ~ 6 N D?
//
//   attnlab run scaling-law                 # 9 sizes x 2 seeds, ~5-10 min on 2 cores
//   attnlab run scaling-law --quick         # 5 sizes x 1 seed, ~20 s
//   attnlab run scaling-law --seeds 3 --steps 2000 --d_models 16,32,64,96 --layers 1,2,2,4
//
// What is measured. Every size (d_model, layers; heads of head_dim, feed-forward 4 d_model) is
// trained on the built-in toy-grammar corpus for --steps steps with a linear warm-up and then a
// constant learning rate (the smaller sizes go on longer, see steps_of), and its held-out loss
// is taken at log-spaced steps. So one run is one loss-against-tokens curve, and the points at
// --steps, a token budget every size shares, are the loss-against-size data.
//   L(N) = a N^(-alpha) + c      on the losses at --steps, N = non-embedding parameters (as Kaplan
//                                et al. count them: embeddings and output layer left out);
//   L(D) = b D^(-beta) + c_D     on the largest model's curve after the warm-up;
//   N_opt(C) ~ C^a               from IsoFLOP profiles (experiments/common/compute_frontier.h).
// The fits are nonlinear least squares by variable projection (experiments/common/
// power_law_fit.h). Their 95% intervals are percentile bootstraps: a replicate redraws the
// groups of held-out windows (--groups blocks of consecutive windows, the same draw for every
// size so the comparison between sizes stays paired) and, for each size, its seeds, both with
// replacement, and refits. With one seed the interval holds the evaluation noise only, not the
// run-to-run noise of training; more --seeds widen it honestly.
//
// Why the numbers will not be Kaplan's: the corpus is a small grammar whose next character is
// often certain, so the floor c is a large part of every loss and the reducible part L - c is
// small; the models are thousands of parameters, not millions to billions; and the token axis
// counts repeated passes over one short text.
// Step through: train_scaling_run (experiments/common/scaling_run.cpp), fit_power_law.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "autograd/error.h"
#include "experiments/common/compute_frontier.h"
#include "experiments/common/loglog.h"
#include "experiments/common/power_law_fit.h"
#include "experiments/common/scaling_run.h"
#include "experiments/experiment.h"
#include "experiments/report/charts.h"
#include "experiments/report/table.h"
#include "experiments/run_context.h"
#include "train/progress.h"
#include "train/run/task_setup.h"

namespace attn::experiments {

namespace {

// Published values, not in the seed documents (003 names the power laws and Chinchilla's rule
// without numbers): Kaplan et al. 2020, "Scaling Laws for Neural Language Models", L(N) and L(D)
// exponents; the Chinchilla rule "scale N and D proportionally" with C = 6 N D means
// N_opt ~ C^0.5 (Hoffmann et al. 2022 estimate about 0.5).
constexpr double kKaplanAlphaN = 0.076;
constexpr double kKaplanAlphaD = 0.095;
constexpr double kProportionalExponent = 0.5;

struct Size {
  int64_t d_model = 0, layers = 0;
};

std::vector<Size> sizes_of(const Config& cfg) {
  const auto d = cfg.get_ints("d_models"), l = cfg.get_ints("layers");
  std::vector<Size> out;
  for (size_t i = 0; i < d.size() && i < l.size(); ++i) out.push_back({d[i], l[i]});
  return out;
}

// Kaplan et al.'s estimate of the non-embedding parameters, 12 layers d_model^2 (attention
// 4 d^2, feed-forward 8 d^2): known before any model is built, so it can set the step counts.
double approx_params(Size s) {
  return 12.0 * static_cast<double>(s.layers * s.d_model * s.d_model);
}

// The evaluation grid: eval_points steps equally spaced in log from the end of the warm-up to
// --steps, continued with the same ratio up to --steps x --small_mult.
std::vector<int64_t> eval_grid(const Config& cfg) {
  const auto steps = static_cast<double>(cfg.get_int("steps"));
  const auto first = static_cast<double>(cfg.get_int("warmup"));
  const double ratio =
      std::pow(steps / first, 1.0 / static_cast<double>(cfg.get_int("eval_points") - 1));
  std::set<int64_t> s;
  for (double v = first; v <= steps * cfg.get_real("small_mult") * (1 + 1e-9); v *= ratio)
    s.insert(std::llround(v));
  s.insert(cfg.get_int("steps"));
  return {s.begin(), s.end()};
}

// How long size s trains: the last grid point at or below --steps x min(--small_mult,
// sqrt(N_largest / N)). Every size reaches --steps (the common token budget of the L(N) fit);
// the smaller ones, cheap per step, go on so that the IsoFLOP profiles see small models with
// many tokens at the larger budgets (without it every profile's best size sits at the small
// end of the sizes that reach the budget).
int64_t steps_of(const Config& cfg, Size s, const std::vector<Size>& sizes) {
  double n_max = 0;
  for (const Size& z : sizes) n_max = std::max(n_max, approx_params(z));
  const double mult = std::min(cfg.get_real("small_mult"), std::sqrt(n_max / approx_params(s)));
  const double limit = static_cast<double>(cfg.get_int("steps")) * std::max(1.0, mult);
  int64_t last = cfg.get_int("steps");
  for (int64_t g : eval_grid(cfg))
    if (static_cast<double>(g) <= limit * (1 + 1e-9)) last = std::max(last, g);
  return last;
}

train::TrainConfig run_config(const Config& cfg, Size s, uint64_t seed) {
  train::TrainConfig t;
  t.task = "charlm";
  t.model = "gpt";
  t.seed = seed;
  t.d_model = s.d_model;
  t.num_layers = s.layers;
  t.nhead = s.d_model / cfg.get_int("head_dim");
  t.dim_ff = 4 * s.d_model;
  t.block_len = cfg.get_int("block_len");
  t.batch_size = cfg.get_int("batch_size");
  t.steps = steps_of(cfg, s, sizes_of(cfg));
  t.lr = cfg.get_real("lr");
  t.schedule = "warmup";  // linear warm-up, then constant: every checkpoint is a fair endpoint
  t.warmup = cfg.get_int("warmup");
  t.clip = 1.0;
  t.weight_decay = 0;
  t.eval_size = cfg.get_int("eval_size");
  t.progress = "off";
  return t;
}

// The index of --steps in every run's evaluations (the grid is shared, so it is the same).
size_t common_checkpoint(const Config& cfg) {
  const auto g = eval_grid(cfg);
  return static_cast<size_t>(std::find(g.begin(), g.end(), cfg.get_int("steps")) - g.begin());
}

// runs[i][k]: size i (sorted by non-embedding parameters), seed k.
using Runs = std::vector<std::vector<ScalingCurve>>;

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

double nonemb(const Runs& runs, size_t i) {
  return static_cast<double>(runs[i].front().non_embedding_params);
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

std::string yes(bool b) {
  return b ? "yes" : "no";
}

std::string interval_text(const Interval& i, int precision = 3) {
  return fmt::format("[{:.{}f}, {:.{}f}]", i.lo, precision, i.hi, precision);
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

// ---- training ----------------------------------------------------------------------------------

Runs train_all(const Config& cfg, uint64_t seed0, RunContext& ctx) {
  const std::vector<Size> sizes = sizes_of(cfg);
  const int64_t seeds = cfg.get_int("seeds");
  const std::vector<int64_t> grid = eval_grid(cfg);
  train::Progress progress(static_cast<int64_t>(sizes.size()) * seeds, train::ProgressMode::kAuto,
                           1);
  CsvWriter csv = ctx.csv("curves", {"d_model", "layers", "seed", "non_embedding_params", "step",
                                     "tokens", "heldout_loss"});
  Runs runs;
  int64_t done = 0;
  for (const Size& s : sizes) {
    std::vector<ScalingCurve> per_seed;
    for (int64_t k = 0; k < seeds; ++k) {
      const uint64_t seed = seed0 + static_cast<uint64_t>(k);
      const train::TrainConfig tc = run_config(cfg, s, seed);
      std::vector<int64_t> at;
      for (int64_t g : grid)
        if (g <= tc.steps) at.push_back(g);
      ScalingCurve c = train_scaling_run(tc, at, cfg.get_int("groups"));
      for (size_t j = 0; j < c.steps.size(); ++j)
        csv.row({static_cast<double>(s.d_model), static_cast<double>(s.layers),
                 static_cast<double>(seed), static_cast<double>(c.non_embedding_params),
                 static_cast<double>(c.steps[j]), static_cast<double>(c.tokens[j]), c.loss(j)});
      progress.update(++done, {{"loss", c.loss(c.steps.size() - 1)}},
                      static_cast<double>(c.tokens.back()) / c.seconds);
      per_seed.push_back(std::move(c));
    }
    runs.push_back(std::move(per_seed));
  }
  progress.finish();
  std::stable_sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
    return a.front().non_embedding_params < b.front().non_embedding_params;
  });
  return runs;
}

void report_sizes(const Runs& runs, const Config& cfg, RunContext& ctx) {
  Table t(fmt::format("Every size after {} steps, the token budget they share (loss: held-out "
                      "nats per character, mean over seeds)",
                      cfg.get_int("steps")),
          {"d_model", "layers", "heads", "N (non-embedding)", "all parameters", "tokens",
           "held-out loss", "seed spread", "trained on to (tokens)", "seconds per run"});
  nlohmann::ordered_json js = nlohmann::ordered_json::array();
  const Draw all = make_draw(runs, nullptr);
  for (size_t i = 0; i < runs.size(); ++i) {
    const ScalingCurve& c = runs[i].front();
    const size_t last = common_checkpoint(cfg);
    double lo = INFINITY, hi = -INFINITY, secs = 0;
    std::vector<double> per_seed;
    for (const auto& r : runs[i]) {
      lo = std::min(lo, r.loss(last)), hi = std::max(hi, r.loss(last));
      secs += r.seconds / static_cast<double>(runs[i].size());
      per_seed.push_back(r.loss(last));
    }
    const double loss = drawn_loss(runs, all, i, last);
    t.add_row({std::to_string(c.d_model), std::to_string(c.layers),
               std::to_string(c.d_model / cfg.get_int("head_dim")),
               std::to_string(c.non_embedding_params), std::to_string(c.params),
               std::to_string(c.tokens[last]), fixed(loss, 4),
               runs[i].size() > 1 ? fixed(hi - lo, 4) : "-", std::to_string(c.tokens.back()),
               fixed(secs, 1)});
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

// ---- loss against size --------------------------------------------------------------------------

BootstrapFit fit_size_law(const Runs& runs, const Config& cfg, Generator& gen, RunContext& ctx) {
  std::vector<double> n;
  for (size_t i = 0; i < runs.size(); ++i) n.push_back(nonemb(runs, i));
  const size_t last = common_checkpoint(cfg);
  const BootstrapFit b = bootstrap_power_law(
      n,
      [&](Generator* g) {
        const Draw d = make_draw(runs, g);
        std::vector<double> y;
        for (size_t i = 0; i < runs.size(); ++i) y.push_back(drawn_loss(runs, d, i, last));
        return y;
      },
      cfg.get_int("bootstrap"), gen);
  const std::vector<double> y = [&] {
    const Draw d = make_draw(runs, nullptr);
    std::vector<double> v;
    for (size_t i = 0; i < runs.size(); ++i) v.push_back(drawn_loss(runs, d, i, last));
    return v;
  }();
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
  LinePlot p;
  p.title = "Held-out loss against model size";
  p.x_label = "non-embedding parameters N";
  p.y_label = "held-out loss (nats per character)";
  p.log_x = p.log_y = true;
  Series fit{"fit a N^-alpha + c", {}, {}, "", true, false};
  for (double x : log_spaced(n.front(), n.back(), 60)) {
    fit.x.push_back(x);
    fit.y.push_back(b.fit.at(x));
  }
  p.series = {{"measured (mean over seeds)", n, y}, fit};
  p.refs = {{RefLine::kHorizontal, b.fit.c, "floor c"}};
  ctx.figure("loss_vs_params", line_plot_svg(p),
             fmt::format("Final held-out loss of every size with the fitted law (alpha {:.3f}, "
                         "c {:.3f}). On log axes the curve flattens towards the floor c.",
                         b.fit.alpha, b.fit.c));
  LinePlot q;
  q.title = "Reducible loss L - c against model size";
  q.x_label = "non-embedding parameters N";
  q.y_label = "L - c (nats per character)";
  q.log_x = q.log_y = true;
  Series line{"a N^-alpha", {}, {}, "", true, false}, pts{"measured L - c", n, {}};
  for (double v : y) pts.y.push_back(v - b.fit.c);
  for (double x : log_spaced(n.front(), n.back(), 60)) {
    line.x.push_back(x);
    line.y.push_back(b.fit.at(x) - b.fit.c);
  }
  q.series = {pts, line};
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
  LinePlot p;
  p.title = "Held-out loss against training tokens, every size";
  p.x_label = "training tokens processed D";
  p.y_label = "held-out loss (nats per character)";
  p.log_x = p.log_y = true;
  const Draw all = make_draw(runs, nullptr);
  for (size_t i = 0; i < runs.size(); ++i) {
    Series s{fmt::format("N = {}", runs[i].front().non_embedding_params), {}, {}, "", false, false};
    for (size_t j = 0; j < runs[i].front().tokens.size(); ++j) {
      s.x.push_back(static_cast<double>(runs[i].front().tokens[j]));
      s.y.push_back(drawn_loss(runs, all, i, j));
    }
    p.series.push_back(s);
  }
  Series fit{"fit b D^-beta + c_D (largest)", {}, {}, "#000000", true, false};
  for (double x : log_spaced(d.front(), d.back(), 60)) {
    fit.x.push_back(x);
    fit.y.push_back(b.fit.at(x));
  }
  p.series.push_back(fit);
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

struct Frontier {
  double slope = NAN;
  Interval interval{NAN, NAN};
  int64_t interior = 0, budgets = 0;
  int64_t smallest_best = 0, largest_best = 0;  // budgets whose best size is at that end
};

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
  LinePlot iso;
  iso.title = "IsoFLOP profiles: loss against size at a fixed compute budget";
  iso.x_label = "non-embedding parameters N";
  iso.y_label = "held-out loss (nats per character)";
  iso.log_x = true;
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
  if (opt_c.size() >= 2) {
    LinePlot p;
    p.title = "Compute-optimal size against compute";
    p.x_label = "compute C = 6 N D (FLOPs)";
    p.y_label = "N_opt (non-embedding parameters)";
    p.log_x = p.log_y = true;
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
    ctx.figure("frontier", line_plot_svg(p),
               fmt::format("N_opt ~ C^a with a = {:.2f} (95% bootstrap interval {}, over {} of "
                           "{} replicates with an interior optimum at two budgets or more).",
                           f.slope, interval_text(f.interval, 2), slopes.size(),
                           cfg.get_int("bootstrap")));
  }
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

// ---- the run ------------------------------------------------------------------------------------

void run(const Config& cfg, RunContext& ctx) {
  const uint64_t seed0 = ctx.seed();
  ctx.section("Training every size");
  std::vector<int64_t> own_steps;
  for (const Size& s : sizes_of(cfg)) own_steps.push_back(steps_of(cfg, s, sizes_of(cfg)));
  ctx.note(fmt::format(
      "{} sizes x {} seeds. Every size trains {} steps of {} windows of {} characters ({} "
      "tokens: the budget of the loss-against-size fit); the smaller ones go on (steps by size: "
      "{}) for the compute frontier. Learning rate {:g} after a {}-step linear warm-up, then "
      "constant; held-out loss at steps {} (up to each run's last step).",
      sizes_of(cfg).size(), cfg.get_int("seeds"), cfg.get_int("steps"), cfg.get_int("batch_size"),
      cfg.get_int("block_len"),
      cfg.get_int("steps") * cfg.get_int("batch_size") * cfg.get_int("block_len"),
      fmt::join(own_steps, ", "), cfg.get_real("lr"), cfg.get_int("warmup"),
      fmt::join(eval_grid(cfg), ", ")));
  const Runs runs = train_all(cfg, seed0, ctx);
  report_sizes(runs, cfg, ctx);
  ctx.result("heldout_groups", static_cast<int64_t>(runs.front().front().group_loss[0].size()));

  Generator gen(seed0 * 7919 + 17);
  ctx.section("Loss against model size");
  const BootstrapFit fn = fit_size_law(runs, cfg, gen, ctx);
  ctx.section("Loss against training tokens");
  const BootstrapFit fd = fit_data_law(runs, cfg, gen, ctx);
  ctx.section("Compute-optimal size");
  const Frontier fr = compute_frontier(runs, cfg, gen, ctx);

  const double n_lo = nonemb(runs, 0), n_hi = nonemb(runs, runs.size() - 1);
  DocumentComparison cmp(fmt::format(
      "003 (GPT; Scaling laws and emergent abilities) vs ours: {} sizes, N = {:.0f} to {:.0f} "
      "non-embedding parameters, {} seed(s)",
      runs.size(), n_lo, n_hi, cfg.get_int("seeds")));
  // "Falls as a power law": the exponent's whole interval is above 0 and the 3-number law
  // explains at least 90% of the spread of the losses.
  auto power_law = [](const BootstrapFit& b) { return b.alpha.lo > 0 && b.r_squared >= 0.9; };
  // The size the law misses most: where a smooth law breaks (a width too small to hold the
  // alphabet, say), this is the point to look at.
  double worst_n = 0, worst_loss = 0, worst_res = 0;
  for (const auto& s : ctx.results().at("sizes")) {
    const double n = s.at("non_embedding_params").get<double>();
    const double l = s.at("final_loss").get<double>();
    if (std::abs(l - fn.fit.at(n)) > std::abs(worst_res))
      worst_n = n, worst_loss = l, worst_res = l - fn.fit.at(n);
  }
  ctx.result("fit_params_worst_point",
             {{"non_embedding_params", worst_n}, {"loss", worst_loss}, {"residual", worst_res}});
  cmp.add_exact("loss falls as a power law in model size N (003)", "yes", yes(power_law(fn)),
                fmt::format("alpha {:.3f}, interval {}, R^2 {:.3f} (yes: interval above 0 and "
                            "R^2 >= 0.9); the law misses most at N = {:.0f}: loss {:.3f}, "
                            "{:+.3f} from the fit",
                            fn.fit.alpha, interval_text(fn.alpha), fn.r_squared, worst_n,
                            worst_loss, worst_res));
  cmp.add_exact("loss falls as a power law in tokens D (003)", "yes", yes(power_law(fd)),
                fmt::format("beta {:.3f}, interval {}, R^2 {:.3f}", fd.fit.alpha,
                            interval_text(fd.alpha), fd.r_squared));
  cmp.add(
      "compute-optimal N ~ C^a: 'scale model and data proportionally' (003, Chinchilla) "
      "with C = 6ND means a = 0.5",
      kProportionalExponent, fr.slope, 0.15,
      fmt::format("{} of {} budgets had an interior optimum (interval {}); at {} the best "
                  "was the smallest size that reaches the budget (the optimum may lie below "
                  "it), at {} the largest (it may lie above); the sizes are few and far apart, "
                  "so N_opt moves in steps between them",
                  fr.interior, fr.budgets, interval_text(fr.interval, 2), fr.smallest_best,
                  fr.largest_best),
      2);
  const double floor_share = fn.fit.c / ctx.results().at("loss_largest").get<double>();
  cmp.add("alpha_N of Kaplan et al. 2020 (literature; no exponent in the documents)", kKaplanAlphaN,
          fn.fit.alpha, 0.03,
          fmt::format("interval {}; on this corpus the floor c is {:.0f}% of the largest "
                      "model's loss, and N spans only {:.0f}x at thousands of parameters",
                      interval_text(fn.alpha), 100 * floor_share, n_hi / n_lo));
  cmp.add(
      "alpha_D of Kaplan et al. 2020 (literature; their D: dataset size with early "
      "stopping)",
      kKaplanAlphaD, fd.fit.alpha, 0.03,
      fmt::format("interval {}; ours is one small model's training curve over repeated "
                  "passes of a short text, not loss against dataset size",
                  interval_text(fd.alpha)));
  const ScalingCurve& big = runs.back().front();
  ctx.note(fmt::format(
      "Toy scale, read the exponents with care: the fitted floor c = {:.3f} nats is {:.0f}% of "
      "the largest model's loss (the part no size removes, on a corpus with a low entropy "
      "floor); N spans "
      "{:.0f} to {:.0f} non-embedding parameters (Kaplan et al. went up to about a billion, on web "
      "text far from any floor); and the token axis is {:.1f} passes over a {}-character text. "
      "The literature's exponents are shown as such: the documents give none.",
      fn.fit.c, 100 * floor_share, n_lo, n_hi,
      static_cast<double>(big.tokens.back()) / static_cast<double>(big.train_chars),
      big.train_chars));
  ctx.compare(cmp);
}

}  // namespace

Experiment scaling_law() {
  Experiment e;
  e.name = "scaling-law";
  e.source = "003 (GPT; Scaling laws and emergent abilities)";
  e.purpose =
      "GPT character models at several sizes: fit L(N) = a N^-alpha + c with bootstrap "
      "intervals, loss against tokens, and the compute-optimal size per budget";
  // Measured: 511-636 s wall (about 240 s CPU) with the machine shared by other jobs (load
  // 9-12); --quick 15-25 s wall (5.5 s CPU) there.
  e.typical_time = "~5-11 min";
  e.config
      .add_ints("d_models", {8, 8, 16, 16, 24, 32, 48, 64, 96}, "model widths, one per size",
                {.min = 8})
      .add_ints("layers", {1, 2, 1, 2, 2, 2, 2, 3, 4},
                "blocks of each size (as many as --d_models)", {.min = 1})
      .add_int("head_dim", 8, "width of one attention head (heads = d_model / head_dim)",
               {.min = 1})
      .add_real("small_mult", 6,
                "smaller sizes train up to this many times --steps (x sqrt(N_largest / N))",
                {.min = 1})
      .add_int("seeds", 2, "seeds per size", {.min = 1})
      .add_int("groups", 16, "blocks of held-out windows the bootstrap resamples", {.min = 2})
      .add_int("eval_points", 12, "held-out evaluations per run, log-spaced after the warm-up",
               {.min = 4})
      .add_int("bootstrap", 400, "bootstrap replicates of every fit", {.min = 10})
      .add_int("budgets", 10, "compute budgets of the IsoFLOP profiles", {.min = 2});
  // steps: every size's budget (the L(N) token budget); a linear warm-up, then a constant rate;
  // batch_size and block_len: windows per step and characters per window; eval_size: held-out
  // windows (at most those the validation text holds).
  add_optimizer_fields(e.config, {.steps = 1000, .batch_size = 16, .lr = 3e-3, .warmup = 50});
  add_data_fields(e.config, {.block_len = 32});
  add_eval_fields(e.config, {.eval_size = 512});
  add_seed_field(e.config, 1, "first seed (weights, data order)");
  e.quick = {{"d_models", "8,16,24,32,48"}, {"seeds", "1"},   {"small_mult", "3"},
             {"layers", "1,1,1,2,2"},       {"steps", "240"}, {"warmup", "20"},
             {"eval_size", "128"},          {"groups", "8"},  {"eval_points", "8"},
             {"bootstrap", "100"}};
  e.check = [](const Config& c) {
    const auto d = c.get_ints("d_models"), l = c.get_ints("layers");
    if (d.size() != l.size())
      throw UsageError(
          fmt::format("scaling-law: --d_models has {} sizes but --layers has {}; "
                      "give one layer count per width",
                      d.size(), l.size()));
    if (d.size() < 4)
      throw UsageError(
          fmt::format("scaling-law: --d_models gives {} sizes; the law has 3 "
                      "numbers, so fit at least 4 sizes",
                      d.size()));
    const int64_t hd = c.get_int("head_dim");
    for (int64_t w : d)
      if (w % hd != 0)
        throw UsageError(fmt::format(
            "scaling-law: --head_dim {} must divide every width in --d_models (not {})", hd, w));
    if (c.get_int("warmup") < 1)
      throw UsageError(
          "scaling-law: --warmup must be at least 1: the evaluations are log-spaced from the end "
          "of the warm-up");
    if (c.get_int("warmup") * 2 >= c.get_int("steps"))
      throw UsageError(fmt::format(
          "scaling-law: --steps {} must be more than twice --warmup {} (the loss-against-tokens "
          "fit starts after twice the warm-up)",
          c.get_int("steps"), c.get_int("warmup")));
    if (c.get_int("groups") > c.get_int("eval_size"))
      throw UsageError(fmt::format("scaling-law: --groups {} cannot exceed --eval_size {}",
                                   c.get_int("groups"), c.get_int("eval_size")));
    for (size_t i = 0; i < d.size(); ++i)
      train::validate_train_config(run_config(c, {d[i], l[i]}, 0));
    const auto grid = eval_grid(c);
    const auto fit_points = std::count_if(grid.begin(), grid.end(), [&](int64_t g) {
      return g >= 2 * c.get_int("warmup") && g <= c.get_int("steps");
    });
    if (fit_points < 4)
      throw UsageError(fmt::format(
          "scaling-law: only {} of the --eval_points {} evaluations fall between step {} (twice "
          "--warmup) and --steps {}; the loss-against-tokens fit needs 4: raise --eval_points "
          "or --steps",
          fit_points, c.get_int("eval_points"), 2 * c.get_int("warmup"), c.get_int("steps")));
    // The held-out windows the validation text holds (fewer than --eval_size when the windows
    // are long) must fill every group.
    const auto windows = train::make_task_setup(run_config(c, {d[0], l[0]}, 0)).heldout_set.size();
    if (static_cast<int64_t>(windows) < c.get_int("groups"))
      throw UsageError(fmt::format(
          "scaling-law: the held-out text holds {} windows of --block_len {}, fewer than "
          "--groups {}; lower --groups or --block_len",
          windows, c.get_int("block_len"), c.get_int("groups")));
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
