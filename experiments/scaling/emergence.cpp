// emergence [003 "Scaling laws and emergent abilities"]: does an ability "appear suddenly" above
// a model size, or does the metric make it look so? The same models, two metrics.
//
//   attnlab run emergence                      # 6 sizes x 2 seeds, ~1 min of CPU
//   attnlab run emergence --quick              # seconds; every row not judged
//   attnlab run emergence --digits 5 --d_models 8,16,24,32,48,64,96 --seeds 3
//
// 003 says abilities such as arithmetic are absent in small models and appear suddenly above a
// threshold size, so that loss curves say little about them. The metric-choice account (Schaeffer,
// Miranda and Koyejo 2023, "Are Emergent Abilities of Large Language Models a Mirage?") says the
// jump is in the metric: exact match needs all L answer tokens right, about p^L for a per-token
// accuracy p, and p^L stays near 0 until p is near 1 and then shoots up, while the per-token
// log-likelihood of the same models improves smoothly.
//
// The run: GPT models of --d_models widths (--num_layers blocks, --nhead heads, feed-forward
// 4 d_model) learn --digits-digit addition (experiments/scaling/emergence_task.h) with the same
// data, loop and budget, over --seeds seeds; each is scored on the same held-out problems (never
// drawn for training). emergence_report.cpp measures each curve's abruptness (its largest step
// between adjacent sizes as a share of its whole movement) and compares exact match with p^L.
// Step through: score_additions, then abruptness.
#include "experiments/scaling/emergence.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

struct Settings {
  std::vector<int64_t> d_models;
  train::options::ModelSettings model;
  train::options::OptimizerSettings optimizer;
  int64_t eval_size = 0, eval_every = 0, seeds = 0;
  uint64_t seed = 0;
};

nn::DecoderOnlyOptions model_options(const Settings& w, int64_t d_model, int64_t input_length) {
  nn::DecoderOnlyOptions o;
  o.vocab_size = kAdditionVocabulary;
  o.max_len = input_length;
  o.d_model = d_model;
  o.nhead = w.model.nhead;
  o.num_layers = w.model.num_layers;
  o.dim_feedforward = 4 * d_model;
  o.dropout = 0;  // fresh problems every step: nothing to regularise
  return o;
}

// Trains one size with one seed and scores it on the held-out problems.
SizePoint train_size(const Settings& w,
                     const RunContext& ctx,
                     const AdditionTask& task,
                     const AdditionSet& held,
                     int64_t d_model,
                     int64_t seed_index) {
  const uint64_t seed = w.seed + 1000 * static_cast<uint64_t>(seed_index);
  Generator init(seed), data(seed + 1);
  nn::DecoderOnlyTransformer model(model_options(w, d_model, task.input_length()), init);
  train::FitSettings s = kit::fit_settings(
      ctx, fmt::format("d_model {} seed {}", d_model, seed_index + 1), w.optimizer);
  s.eval_every = w.eval_every;
  train::fit(
      model, s,
      [&](const train::BatchPart& part) {
        const AdditionSet b = task.draw(s.batch_size, data);
        return train::StepLoss{cross_entropy(model.forward(part.rows(b.ids)), part.rows(b.targets),
                                             data::kIgnoreIndex)};
      },
      [&](int64_t) {
        const AdditionScore sc = score_additions(model, held);
        return train::Metrics{{"exact_match", sc.exact_match},
                              {"token_accuracy", sc.token_accuracy},
                              {"token_nll", sc.token_nll}};
      });
  return {d_model, kit::count_parameters(model), score_additions(model, held)};
}

void run(const Config& cfg, RunContext& ctx) {
  const auto ev = read_eval(cfg);
  Settings w{
      cfg.get_ints("d_models"), read_model(cfg), read_optimizer(cfg), ev.eval_size, ev.eval_every,
      cfg.get_int("seeds"),     ctx.seed()};
  std::sort(w.d_models.begin(), w.d_models.end());
  AdditionTask task(cfg.get_int("digits"));
  Generator held_gen(w.seed + 999);
  const AdditionSet held = task.draw(w.eval_size, held_gen);
  task.hold_out(held);
  const auto [a, b] = held.operands.front();
  ctx.note(fmt::format("Held-out example: {} + {} = {} (written least significant digit first)", a,
                       b, a + b));
  EmergenceGrid g;
  g.answer_length = task.answer_length();
  g.eval_size = w.eval_size;
  // The runs are independent (each its own generators; the task and held-out set are only
  // read), so they train side by side.
  g.points =
      kit::seed_grid(w.d_models.size(), static_cast<size_t>(w.seeds), [&](size_t c, size_t k) {
        return train_size(w, ctx, task, held, w.d_models[c], static_cast<int64_t>(k));
      });
  report_emergence(g, ctx);
}

}  // namespace

Experiment emergence() {
  Experiment e;
  e.name = "emergence";
  e.source = "003 \"Scaling laws and emergent abilities\"";
  e.purpose = "Exact match vs per-token log-likelihood across sizes: a jump, or the metric?";
  e.config.add_int("digits", 6, "digits per operand (the answer has digits + 1)",
                   {.min = 1, .max = 9});
  e.config.add_ints("d_models", {6, 8, 12, 16, 24, 32},
                    "model widths, one model per width (at least 3; each divisible by --nhead)",
                    {.min = 2, .max = 512});
  e.config.add_int("seeds", 2, "seeds per size (their spread sets the tolerances)",
                   {.min = 1, .max = 20});
  add_model_fields(e.config, {.nhead = 2, .num_layers = 2});
  add_optimizer_fields(
      e.config, {.steps = 600, .batch_size = 64, .lr = 3e-3, .schedule = "cosine", .warmup = 100});
  add_eval_fields(e.config, {.eval_size = 1000, .eval_every = 200});
  e.quick = {{"steps", "60"},
             {"warmup", "10"},
             {"seeds", "1"},
             {"eval_size", "200"},
             {"eval_every", "30"}};
  e.check = [](const Config& c) {
    check_model(c);
    check_optimizer(c);  // cosine: --steps must exceed --warmup
    const auto& d = c.get_ints("d_models");
    if (d.size() < 3)
      throw UsageError(
          fmt::format("emergence: --d_models needs at least 3 widths, got {}", d.size()));
    for (int64_t x : d)
      if (x % c.get_int("nhead") != 0)
        throw UsageError(fmt::format("emergence: --nhead {} does not divide --d_models entry {}",
                                     c.get_int("nhead"), x));
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
