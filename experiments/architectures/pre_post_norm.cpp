// pre-post-norm [001 "The transformer block" (pre-norm versus post-norm), 000 Algorithm 3]: where
// the layer norm sits. A GPT-style character model on the built-in corpus, 6 and 12 blocks,
// post-norm (the 2017 block of Algorithm 3: x = norm(x + f(x))) against pre-norm
// (x = x + f(norm(x))), each with and without learning-rate warm-up, over a learning-rate sweep
// and a few seeds. Measured: how often a run fails (the trainer stops it as diverged, or it ends
// no better than character frequencies), the final held-out loss, and the gradient norm of each
// block at initialisation.
//
//   attnlab run pre-post-norm                      # ~2 min on 2 idle cores
//   attnlab run pre-post-norm --quick              # ~15 s
//   attnlab run pre-post-norm --lrs 3e-3,3e-2 --depths 12 --seeds 5
//
// Why a norm's place matters. Pre-norm keeps an identity path from the embeddings to the output:
// d(out)/d(x_l) = I + (terms of later blocks), so every block's gradient is about the same size.
// Post-norm divides by the norm after every residual sum, so the gradient reaching block l has
// passed through the Jacobians of all later norms; at initialisation it is largest at the last
// blocks (Xiong et al. 2020), and large early Adam updates there can derail training unless
// the learning rate starts small (warm-up).
// Step through: nn::sublayer (the two placements), train::Trainer::run (the divergence stop),
// then init_block_gradient_norms.
#include "experiments/kit/kit.h"
#include "experiments/kit/trained_model_report.h"

#include "data/stream.h"
#include "experiments/architectures/pre_post_norm_claims.h"
#include "experiments/common/trained_run.h"
#include "train/optim/clip.h"
#include "train/run/task_model.h"
#include "train/run/task_setup.h"
#include "train/trainer.h"

namespace attn::experiments {

namespace {

using pre_post::Cell, pre_post::InitGradients, pre_post::Outcome;

std::string norm_name(bool pre) {
  return pre ? "pre-norm" : "post-norm";
}

std::string warm_name(bool warm) {
  return warm ? "warm-up" : "no warm-up";
}

// The character model of every run: task charlm (built-in toy-grammar corpus), model gpt.
train::TrainConfig lm_config(const Config& cfg, int64_t depth, bool pre, uint64_t seed) {
  train::TrainConfig t;
  t.task = "charlm";
  t.model = "gpt";
  t.seed = seed;
  t.d_model = cfg.get_int("d_model");
  t.nhead = cfg.get_int("nhead");
  t.dim_ff = cfg.get_int("dim_ff");
  t.num_layers = depth;
  t.norm_first = pre;
  t.block_len = cfg.get_int("block_len");
  t.batch_size = cfg.get_int("batch");
  t.steps = cfg.get_int("steps");
  t.clip = cfg.get_real("clip");
  t.eval_size = cfg.get_int("eval_size");
  t.eval_every = t.steps;  // one evaluation, at the end
  t.target = 0;            // every run takes all its steps
  t.checkpoint_every = 0;
  t.progress = "off";
  t.schedule = "warmup";  // arm_config sets the warm-up (0: constant learning rate)
  t.warmup = 0;
  return t;
}

// The learning-rate schedule of one arm: a linear warm-up to lr then constant, or constant lr
// from step 1 (the "warmup" schedule with 0 warm-up steps).
train::TrainConfig arm_config(
    const Config& cfg, int64_t depth, bool pre, bool warm, double lr, uint64_t seed) {
  train::TrainConfig t = lm_config(cfg, depth, pre, seed);
  t.warmup = warm ? cfg.get_int("warmup") : 0;
  t.lr = lr;
  return t;
}

Outcome train_one(const train::TrainConfig& tc, double fail_loss, const std::string& name) {
  Outcome o;
  try {
    const TrainedRun r = train_in_scratch(tc, name);
    o.loss = r.summary.final_eval.at("loss");
    o.stop_step = r.summary.result.last_step;
    o.failed = !(o.loss <= fail_loss);  // a NaN loss fails too
  } catch (const train::TrainingDiverged& e) {
    o.exploded = o.failed = true;
    o.stop_step = e.step();
  }
  return o;
}

// ---- gradient norms at initialisation --------------------------------------------------------

// ||grad|| of each block's parameters ("layers.<i>.*": sqrt of the sum of squares of all their
// gradient entries) after one backward pass, without an update, on the model and first batch
// `attnlab train` would start from with tc (same init and stream seeds, as train_task builds
// them): the numbers describe step 1 of those runs.
std::vector<double> init_block_gradient_norms(const train::TrainConfig& tc) {
  train::validate_train_config(tc);
  const train::TaskSetup setup = train::make_task_setup(tc);
  Generator init(train::init_seed(tc));
  const train::SequenceLimits limits{
      std::max(setup.train->max_src_len(), setup.heldout->max_src_len()),
      std::max(setup.train->max_tgt_len(), setup.heldout->max_tgt_len())};
  const auto model = train::make_task_model(tc, *setup.train, limits, init);
  data::ExampleStream stream(setup.train, train::stream_seed(tc));
  model->loss(stream.next(tc.batch_size)).loss.backward();
  std::vector<std::vector<Var>> blocks(static_cast<size_t>(tc.num_layers));
  for (const auto& [name, p] : model->module().named_parameters())
    for (size_t i = 0; i < blocks.size(); ++i)
      if (name.starts_with(fmt::format("layers.{}.", i))) blocks[i].push_back(p);
  std::vector<double> norms;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].empty())
      throw Error(fmt::format("pre-post-norm: no parameter is named layers.{}.*", i));
    norms.push_back(train::grad_norm(blocks[i]));  // a parameter the loss misses counts 0
  }
  return norms;
}

std::vector<InitGradients> measure_init_gradients(const Config& cfg, uint64_t seed0) {
  std::vector<InitGradients> out;
  const int64_t seeds = cfg.get_int("seeds");
  for (int64_t depth : cfg.get_ints("depths"))
    for (bool pre : {false, true}) {
      InitGradients g{depth, pre, std::vector<double>(static_cast<size_t>(depth), 0.0)};
      for (int64_t s = 0; s < seeds; ++s) {
        const auto n =
            init_block_gradient_norms(lm_config(cfg, depth, pre, seed0 + static_cast<uint64_t>(s)));
        for (size_t l = 0; l < n.size(); ++l) g.norms[l] += n[l] / static_cast<double>(seeds);
      }
      out.push_back(g);
    }
  return out;
}

void report_init_gradients(const std::vector<InitGradients>& gs, RunContext& ctx) {
  Table t("Gradient norm of each block's parameters at initialisation (mean over seeds)",
          {"depth", "norm", "first block", "middle block", "last block", "last / first",
           "largest / smallest"});
  LinePlot p = kit::line_plot("Gradient norm per block at initialisation",
                              "block (1 = next to the embeddings)",
                              "||grad|| of the block's parameters", kit::Axes::kLogY);
  nlohmann::ordered_json js = nlohmann::ordered_json::array();
  for (const auto& g : gs) {
    const size_t mid = g.norms.size() / 2;
    t.add_row({std::to_string(g.depth), norm_name(g.pre), fixed(g.norms.front(), 4),
               fixed(g.norms[mid], 4), fixed(g.norms.back(), 4), fixed(g.last_over_first(), 2),
               fixed(g.spread(), 2)});
    Series s = kit::step_series(fmt::format("{}, {} blocks", norm_name(g.pre), g.depth), g.norms);
    s.dashed = g.pre;
    s.markers = true;
    p.series.push_back(s);
    js.push_back({{"depth", g.depth},
                  {"norm", norm_name(g.pre)},
                  {"per_block", g.norms},
                  {"last_over_first", g.last_over_first()},
                  {"spread", g.spread()}});
  }
  ctx.table(t);
  ctx.figure("init_gradients", line_plot_svg(p),
             "One batch, one backward pass, no update: the norm of the gradient of every block's "
             "parameters. Flat = every block learns at the same pace.");
  ctx.result("init_gradients", js);
}

// ---- the sweep ---------------------------------------------------------------------------------

void report_sweep(const std::vector<Cell>& cells,
                  const Config& cfg,
                  double unigram,
                  double fail_loss,
                  RunContext& ctx) {
  const int64_t seeds = cfg.get_int("seeds");
  Table t(fmt::format("{} steps per run, {} seeds per cell; failed = stopped by the trainer or "
                      "held-out loss above {:.3f} nats",
                      cfg.get_int("steps"), seeds, fail_loss),
          {"depth", "norm", "schedule", "lr", "failed", "stopped by trainer", "mean final loss"});
  nlohmann::ordered_json js = nlohmann::ordered_json::array();
  std::map<int64_t, LinePlot> plots;
  std::map<std::pair<int64_t, std::string>, Series> series;
  for (const auto& c : cells) {
    const double ml = c.mean_loss();
    t.add_row({std::to_string(c.depth), norm_name(c.pre), warm_name(c.warm),
               fmt::format("{:g}", c.lr), fmt::format("{} / {}", c.failures(), seeds),
               std::to_string(c.explosions()), std::isnan(ml) ? "-" : fixed(ml, 3)});
    nlohmann::ordered_json losses = nlohmann::ordered_json::array();
    for (const auto& o : c.runs) losses.push_back(finite_or_null(o.exploded ? NAN : o.loss));
    js.push_back({{"depth", c.depth},
                  {"norm", norm_name(c.pre)},
                  {"warmup", c.warm},
                  {"lr", c.lr},
                  {"failed", c.failures()},
                  {"stopped_by_trainer", c.explosions()},
                  {"failure_rate", c.failure_rate()},
                  {"final_losses", losses}});
    const std::string name = fmt::format("{}, {}", norm_name(c.pre), warm_name(c.warm));
    Series& s = series[{c.depth, name}];
    s.name = name;
    s.dashed = !c.warm;
    s.x.push_back(c.lr);
    s.y.push_back(c.failure_rate());
  }
  ctx.table(t);
  ctx.result("sweep", js);
  for (int64_t depth : cfg.get_ints("depths")) {
    LinePlot p = kit::line_plot(fmt::format("{} blocks: fraction of seeds that fail", depth),
                                "peak learning rate", "failed runs / seeds", kit::Axes::kLogX);
    for (const auto& [key, s] : series)
      if (key.first == depth) p.series.push_back(s);
    ctx.figure(fmt::format("failures_{}_blocks", depth), line_plot_svg(p),
               fmt::format("Dashed: constant learning rate from step 1; solid: linear warm-up "
                           "over {} steps. A run fails when the trainer stops it or it ends "
                           "no better than character frequencies ({:.3f} nats).",
                           cfg.get_int("warmup"), unigram));
  }
}

void run(const Config& cfg, RunContext& ctx) {
  const uint64_t seed0 = ctx.seed();
  const int64_t seeds = cfg.get_int("seeds");
  std::vector<double> lrs = cfg.get_reals("lrs");
  std::sort(lrs.begin(), lrs.end());

  ctx.section("The failure line: what character frequencies alone achieve");
  const train::TaskSetup setup = train::make_task_setup(lm_config(cfg, 1, true, seed0));
  // Cross-entropy (nats per character) of the best model that knows only how often each
  // character occurs: a run that ends at this loss has learned nothing about order.
  const double unigram = kit::unigram(setup.heldout_set).entropy;
  const double fail_loss = cfg.get_real("fail_fraction") * unigram;
  ctx.note(
      fmt::format("A model that only knows each character's frequency scores {:.3f} nats "
                  "per character on the held-out windows. A run counts as failed when the "
                  "trainer stops it as diverged or its final held-out loss is above {:.3f} "
                  "({:g} x that).",
                  unigram, fail_loss, cfg.get_real("fail_fraction")));
  ctx.result("unigram_entropy", unigram);
  ctx.result("fail_loss", fail_loss);

  ctx.section("Gradients at initialisation");
  const auto grads = measure_init_gradients(cfg, seed0);
  report_init_gradients(grads, ctx);

  ctx.section("Learning-rate sweep");
  std::vector<Cell> cells;
  for (int64_t depth : cfg.get_ints("depths"))
    for (bool pre : {false, true})
      for (bool warm : {false, true})
        for (double lr : lrs) cells.push_back({depth, pre, warm, lr, {}});
  // Run i is seed i % seeds of cell i / seeds. The runs train side by side: each draws from
  // its own seeded generators (train_task builds them from its config).
  const auto ns = static_cast<size_t>(seeds);
  const std::vector<Outcome> runs = kit::side_by_side(cells.size() * ns, [&](size_t i) {
    const Cell& c = cells[i / ns];
    return train_one(arm_config(cfg, c.depth, c.pre, c.warm, c.lr, seed0 + i % ns),
                     fail_loss,  // an error names the arm and seed, not the sweep
                     fmt::format("depth {}, {}, {}, lr {:g}, seed {}", c.depth, norm_name(c.pre),
                                 warm_name(c.warm), c.lr, i % ns));
  });
  for (size_t i = 0; i < runs.size(); ++i) cells[i / ns].runs.push_back(runs[i]);
  report_sweep(cells, cfg, unigram, fail_loss, ctx);

  pre_post::judge(cfg, ctx, cells, grads);
}

}  // namespace

Experiment pre_post_norm() {
  Experiment e;
  e.name = "pre-post-norm";
  e.source = "001 (the transformer block: pre-norm versus post-norm), 000 Algorithm 3";
  e.purpose =
      "Post-norm vs pre-norm, with and without warm-up, 6 and 12 blocks: failures over a "
      "learning-rate sweep, final loss, gradient per block at init";
  // Measured: 297 s wall (96 s CPU) with the machine shared by other jobs (load ~11); --quick
  // 35 s wall (12 s CPU) there.
  e.config.add_ints("depths", {6, 12}, "blocks of the character model", {.min = 1})
      .add_reals("lrs", {3e-3, 1e-2}, "peak AdamW learning rates of the sweep", {.min = 0})
      .add_int("seeds", 2, "seeds per (depth, norm, schedule, learning rate)", {.min = 1})
      .add_int("d_model", 32, "model width", {.min = 1})
      .add_int("nhead", 4, "attention heads (must divide d_model)", {.min = 1})
      .add_int("dim_ff", 64, "feed-forward width", {.min = 1})
      .add_int("block_len", 32, "characters per training window", {.min = 1})
      .add_int("batch", 16, "windows per step", {.min = 1})
      .add_int("steps", 200, "training steps of every run", {.min = 1})
      .add_int("warmup", 50, "warm-up steps of the warm-up arm (linear, then constant)", {.min = 1})
      .add_real("clip", 0, "global gradient-norm clip (0: off, so nothing hides a blow-up)",
                {.min = 0})
      .add_int("eval_size", 64, "held-out windows of the final evaluation", {.min = 1})
      .add_real("fail_fraction", 0.95,
                "a run fails when its final held-out loss is above this x the unigram entropy",
                {.min = 0})
      .add_int("seed", 1, "first seed (weights, data)", {.min = 0});
  // One depth, one seed, and a top learning rate where 6-block post-norm sits on the plateau
  // for every seed tried while pre-norm trains.
  e.quick = {
      {"depths", "6"}, {"lrs", "3e-3,2e-2"}, {"steps", "150"}, {"seeds", "1"}, {"eval_size", "32"}};
  e.check = [](const Config& c) {
    require_divides(c, "nhead", "d_model");
    if (c.get_int("steps") <= c.get_int("warmup"))
      throw UsageError(fmt::format(
          "pre-post-norm: --steps {} must exceed --warmup {} (the warm-up arm would never "
          "train at its peak learning rate)",
          c.get_int("steps"), c.get_int("warmup")));
    for (double lr : c.get_reals("lrs"))
      if (!(lr > 0))
        throw UsageError(fmt::format("pre-post-norm: --lrs must be positive, got {:g}", lr));
    for (int64_t depth : c.get_ints("depths")) {
      train::TrainConfig t = arm_config(c, depth, false, true, c.get_reals("lrs").front(), 0);
      train::validate_train_config(t);
    }
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
