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
// The fits and their bootstrap intervals: scaling_fits.h.
//
// Why the numbers will not be Kaplan's: the corpus is a small grammar whose next character is
// often certain, so the floor c is a large part of every loss and the reducible part L - c is
// small; the models are thousands of parameters, not millions to billions; and the token axis
// counts repeated passes over one short text.
// Step through: train_scaling_run (experiments/common/scaling_run.cpp), fit_power_law.
#include <set>

#include "experiments/kit/kit.h"
#include "experiments/scaling/scaling_fits.h"
#include "train/run/task_setup.h"

namespace attn::experiments {

namespace {

// Published values, not in the seed documents (003 names the power laws and Chinchilla's rule
// without numbers): Kaplan et al. 2020, "Scaling Laws for Neural Language Models", L(N) and L(D)
// exponents; the Chinchilla rule "scale N and D proportionally" with C = 6 N D means
// N_opt ~ C^0.5 (Hoffmann et al. 2022 estimate about 0.5).
constexpr double kKaplanAlphaN = 0.076;
constexpr double kKaplanAlphaD = 0.095;

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

// ---- training ----------------------------------------------------------------------------------

Runs train_all(const Config& cfg, uint64_t seed0, RunContext& ctx) {
  const std::vector<Size> sizes = sizes_of(cfg);
  const auto seeds = static_cast<size_t>(cfg.get_int("seeds"));
  const std::vector<int64_t> grid = eval_grid(cfg);
  // The runs are independent (each builds its own generators from its seed), so they train side
  // by side, one core each, the last sizes (the largest, in the defaults) first.
  Runs runs = kit::seed_grid(
      sizes.size(), seeds,
      [&](size_t i, size_t k) {
        const train::TrainConfig tc = run_config(cfg, sizes[i], seed0 + k);
        std::vector<int64_t> at;
        for (int64_t g : grid)
          if (g <= tc.steps) at.push_back(g);
        return train_scaling_run(tc, at, cfg.get_int("groups"));
      },
      kit::Start::kLastCells);
  CsvWriter csv = ctx.csv("curves", {"d_model", "layers", "seed", "non_embedding_params", "step",
                                     "tokens", "heldout_loss"});
  for (const auto& size : runs)
    for (const ScalingCurve& c : size)
      for (size_t j = 0; j < c.steps.size(); ++j)
        csv.row({static_cast<double>(c.d_model), static_cast<double>(c.layers),
                 static_cast<double>(c.seed), static_cast<double>(c.non_embedding_params),
                 static_cast<double>(c.steps[j]), static_cast<double>(c.tokens[j]), c.loss(j)});
  std::stable_sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
    return a.front().non_embedding_params < b.front().non_embedding_params;
  });
  return runs;
}

// ---- the run ------------------------------------------------------------------------------------

// "Falls as a power law": the exponent's whole interval is above 0 and the 3-number law
// explains at least 90% of the spread of the losses.
bool falls_as_power_law(const BootstrapFit& b) {
  return b.alpha.lo > 0 && b.r_squared >= 0.9;
}

// "Loss falls as a power law in compute": L(C) fitted to the lowest loss at each budget.
void add_compute_law_row(const Frontier& fr, DocumentComparison& cmp) {
  const std::optional<BootstrapFit>& law = fr.loss_law;
  cmp.add_exact(
         "loss falls as a power law in compute C (003)", "yes",
         law && law->alpha.lo > 0 && law->r_squared >= 0.9 ? "yes" : "no",
         law ? fmt::format("gamma {:.3f}, interval {}, R^2 {:.3f}, on the lowest loss at "
                           "each of {} budgets",
                           law->fit.alpha, interval_text(law->alpha), law->r_squared, fr.budgets)
             : "fewer than 3 budgets: nothing to fit")
      .not_judged_if(!law, "fewer than 3 compute budgets");
}

// 003's claims (power laws in N and D, the compute-optimal exponent) and the literature's
// exponents beside the fits.
void compare_with_document(const Runs& runs,
                           const BootstrapFit& fn,
                           const BootstrapFit& fd,
                           const Frontier& fr,
                           const Config& cfg,
                           RunContext& ctx) {
  const double n_lo = nonemb(runs, 0), n_hi = nonemb(runs, runs.size() - 1);
  DocumentComparison cmp(fmt::format(
      "003 (GPT; Scaling laws and emergent abilities) vs ours: {} sizes, N = {:.0f} to {:.0f} "
      "non-embedding parameters, {} seed(s)",
      runs.size(), n_lo, n_hi, cfg.get_int("seeds")));
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
  cmp.add_exact("loss falls as a power law in model size N (003)", "yes",
                falls_as_power_law(fn) ? "yes" : "no",
                fmt::format("alpha {:.3f}, interval {}, R^2 {:.3f} (yes: interval above 0 and "
                            "R^2 >= 0.9); the law misses most at N = {:.0f}: loss {:.3f}, "
                            "{:+.3f} from the fit",
                            fn.fit.alpha, interval_text(fn.alpha), fn.r_squared, worst_n,
                            worst_loss, worst_res));
  cmp.add_exact("loss falls as a power law in tokens D (003)", "yes",
                falls_as_power_law(fd) ? "yes" : "no",
                fmt::format("beta {:.3f}, interval {}, R^2 {:.3f}", fd.fit.alpha,
                            interval_text(fd.alpha), fd.r_squared));
  add_compute_law_row(fr, cmp);
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
  report_sizes(runs, common_checkpoint(cfg), cfg, ctx);
  ctx.result("heldout_groups", static_cast<int64_t>(runs.front().front().group_loss[0].size()));

  Generator gen(seed0 * 7919 + 17);
  ctx.section("Loss against model size");
  const BootstrapFit fn = fit_size_law(runs, common_checkpoint(cfg), cfg, gen, ctx);
  ctx.section("Loss against training tokens");
  const BootstrapFit fd = fit_data_law(runs, cfg, gen, ctx);
  ctx.section("Compute-optimal size");
  const Frontier fr = compute_frontier(runs, cfg, gen, ctx);

  compare_with_document(runs, fn, fd, fr, cfg, ctx);
}

// Bad settings are rejected before the first model trains.
void check(const Config& c) {
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
    throw UsageError(
        fmt::format("scaling-law: the held-out text holds {} windows of --block_len {}, fewer than "
                    "--groups {}; lower --groups or --block_len",
                    windows, c.get_int("block_len"), c.get_int("groups")));
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
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
