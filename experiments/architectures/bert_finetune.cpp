// bert-finetune [003 BERT]: pre-train a BERT encoder with its two objectives (masked language
// modelling and next-sentence prediction) on the built-in corpus, then fine-tune it on a small
// classification task against the same architecture trained from scratch with the same steps
// and the same labelled sentences.
//
//   attnlab run bert-finetune                  # 3 seeds, about 70 s of CPU
//   attnlab run bert-finetune --labelled 1000  # plenty of labels: does scratch catch up?
//
// Data (bert_finetune_data.h): toy-grammar sentences read as words; next-sentence pairs where
// "next" keeps the subject (a story about one protagonist) and each sentence sits in a fixed
// slot (the segment); the downstream label is "does the verb's object carry an adjective?". Per
// seed: pre-training (bert_finetune_train.h; the NSP loss weighted --nsp_weight beside MLM), then
// fine-tuning and scratch training from the same data seed, the head on the mean hidden state.
// The spread over seeds sets the tolerances. Step through: the loss lambda of pretrain (MLM +
// NSP), then EncoderWithHead::classify_mean.
#include "experiments/architectures/bert_finetune_train.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

using bert_pretrain::Curve;
using bert_pretrain::Pretrained;
using bert_pretrain::SentencePool;
using bert_pretrain::Settings;
using kit::Spread;

// One seed: the pre-training's held-out accuracies, then both classifiers' curves.
struct SeedRun {
  double nsp = 0, mlm = 0, mlm_constant = 0;
  Curve nsp_curve, tuned, scratch;
  double tuned_last() const { return tuned.last(); }
  double scratch_last() const { return scratch.last(); }
  double gain() const { return tuned.last() - scratch.last(); }
};

// Seed s's pre-training and fine-tuning, or (scratch) only its classifier on a fresh encoder.
SeedRun run_part(
    const Settings& w, RunContext& ctx, const SentencePool& pool, int64_t s, bool scratch) {
  const uint64_t data_seed = w.seed + 1000 * static_cast<uint64_t>(s) + 500;
  SeedRun r;
  if (scratch) {
    Generator init(w.seed + 1000 * static_cast<uint64_t>(s));  // the pre-trained model's own init
    r.scratch = bert_pretrain::classify(w, ctx, pool, bert_pretrain::fresh_encoder(w, pool, init),
                                        fmt::format("scratch seed {}", s + 1), data_seed);
    return r;
  }
  const Pretrained p = bert_pretrain::pretrain(w, ctx, pool, s);
  r = {p.nsp.last(), p.mlm.last(), p.mlm_constant, p.nsp, {}, {}};
  r.tuned = bert_pretrain::classify(w, ctx, pool, p.encoder,
                                    fmt::format("fine-tuned seed {}", s + 1), data_seed);
  return r;
}

template <class Field>
Spread spread(const std::vector<SeedRun>& runs, Field field) {
  return kit::spread_of(kit::column(runs, field));
}

// The mean over seeds of a curve (every seed evaluates at the same steps).
std::vector<double> mean_curve(const std::vector<SeedRun>& runs, Curve SeedRun::*curve) {
  std::vector<double> m((runs.front().*curve).accuracy.size(), 0.0);
  for (const SeedRun& r : runs)
    for (size_t i = 0; i < m.size(); ++i)
      m[i] += (r.*curve).accuracy[i] / static_cast<double>(runs.size());
  return m;
}

void report(const Settings& w,
            const SentencePool& pool,
            const std::vector<SeedRun>& runs,
            RunContext& ctx) {
  const double ceiling = 1 - 0.5 / static_cast<double>(pool.nouns());
  Table t(fmt::format("Held-out accuracy, mean ± sd over {} seeds", w.seeds),
          {"quantity", "ours", "reference"});
  t.add_row({"next-sentence prediction", kit::spread_text(spread(runs, &SeedRun::nsp)),
             fmt::format("chance 0.5, best possible {:.3f}", ceiling)});
  t.add_row({"masked tokens", kit::spread_text(spread(runs, &SeedRun::mlm)),
             fmt::format("best constant word {:.3f}", spread(runs, &SeedRun::mlm_constant).mean)});
  t.add_row(
      {fmt::format("classifier, fine-tuned ({} steps, {} labels)", w.finetune_steps, w.labelled),
       kit::spread_text(spread(runs, &SeedRun::tuned_last)), ""});
  t.add_row({"classifier, from scratch (same steps and labels)",
             kit::spread_text(spread(runs, &SeedRun::scratch_last)), ""});
  t.add_row({"fine-tuned - scratch", kit::spread_text(spread(runs, &SeedRun::gain)), ""});
  t.flag_last_row();
  ctx.table(t);
  ctx.note(fmt::format(
      "{} training and {} held-out sentences, {} words; {} held-out pairs and sentences. A random "
      "second sentence has the same subject one time in {} (the nouns), so NSP cannot exceed "
      "{:.3f}.",
      pool.part(bert_pretrain::Part::kTrain).size(),
      pool.part(bert_pretrain::Part::kHeldOut).size(), pool.vocab_size() - data::kNumSpecial,
      w.eval_size, pool.nouns(), ceiling));
  kit::record(ctx, {{"nsp_accuracy", kit::column(runs, &SeedRun::nsp)},
                    {"mlm_accuracy", kit::column(runs, &SeedRun::mlm)},
                    {"mlm_constant_accuracy", kit::column(runs, &SeedRun::mlm_constant)},
                    {"finetuned_accuracy", kit::column(runs, &SeedRun::tuned_last)},
                    {"scratch_accuracy", kit::column(runs, &SeedRun::scratch_last)},
                    {"finetune_gain", kit::column(runs, &SeedRun::gain)}});
  ctx.result("nsp_ceiling", ceiling);

  LinePlot p = kit::line_plot("Downstream task: held-out accuracy while training (mean over seeds)",
                              "fine-tuning step", "held-out accuracy");
  p.series = {{"fine-tuned pre-trained encoder", runs.front().tuned.steps,
               mean_curve(runs, &SeedRun::tuned)},
              {"same encoder from scratch", runs.front().scratch.steps,
               mean_curve(runs, &SeedRun::scratch)}};
  p.refs = {{RefLine::kHorizontal, 0.5, "chance"}};
  ctx.figure("finetune", line_plot_svg(p),
             "Fine-tuned vs scratch: same steps, same labelled sentences");
  LinePlot q = kit::line_plot("Pre-training: next-sentence prediction (mean over seeds)",
                              "pre-training step", "held-out NSP accuracy");
  q.series = {
      {"NSP accuracy", runs.front().nsp_curve.steps, mean_curve(runs, &SeedRun::nsp_curve)}};
  q.refs = {{RefLine::kHorizontal, 0.5, "chance"},
            {RefLine::kHorizontal, ceiling, "best possible"}};
  ctx.figure("nsp", line_plot_svg(q),
             "Next-sentence accuracy on held-out pairs during pre-training");
}

void compare(const Settings& w, const std::vector<SeedRun>& runs, RunContext& ctx) {
  const auto n = static_cast<double>(w.eval_size);
  const auto seeds = static_cast<double>(w.seeds);
  const Spread nsp = spread(runs, &SeedRun::nsp), gain = spread(runs, &SeedRun::gain);
  const Spread tuned = spread(runs, &SeedRun::tuned_last),
               scratch = spread(runs, &SeedRun::scratch_last);
  // A margin of three standard errors of the mean over seeds, never below three standard errors
  // of the rates themselves (a few seeds can underestimate the spread).
  const double nsp_margin = std::max(3 * nsp.sd / std::sqrt(seeds), 3 * 0.5 / std::sqrt(n * seeds));
  const double gain_margin =
      std::max(3 * gain.sd / std::sqrt(seeds),
               3 * kit::rate_difference_se(tuned.mean, scratch.mean, n * seeds));
  DocumentComparison cmp(
      fmt::format("003 BERT: pre-training and fine-tuning vs ours (mean of {} seeds)", w.seeds));
  cmp.add_exact("next-sentence prediction is learnable (held-out accuracy above chance 0.5)", "yes",
                kit::yes_no(nsp.mean - 0.5 > nsp_margin),
                fmt::format("accuracy {:.3f} ± {:.3f} (per seed {:.3f}), margin {:.3f}", nsp.mean,
                            nsp.sd, fmt::join(kit::column(runs, &SeedRun::nsp), ", "), nsp_margin));
  const double mlm = spread(runs, &SeedRun::mlm).mean,
               constant = spread(runs, &SeedRun::mlm_constant).mean;
  cmp.add_exact(
         "fine-tuning the pre-trained encoder beats training from scratch (same steps and data)",
         "yes", kit::yes_no(gain.mean > gain_margin),
         fmt::format("{:.3f} vs {:.3f}: gain {:.3f} ± {:.3f}, margin {:.3f}", tuned.mean,
                     scratch.mean, gain.mean, gain.sd, gain_margin))
      .needs_training(mlm, constant, "pre-training's masked-token accuracy (vs the best constant)")
      .not_judged_if(w.seeds < 2, "one seed has no spread");
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  const auto ev = read_eval(cfg);
  const Settings w{read_model(cfg),
                   read_optimizer(cfg),
                   cfg.get_int("finetune_steps"),
                   cfg.get_int("finetune_batch"),
                   cfg.get_int("labelled"),
                   cfg.get_real("finetune_lr"),
                   cfg.get_real("nsp_weight"),
                   ev.eval_size,
                   ev.eval_every,
                   cfg.get_int("seeds"),
                   ctx.seed()};
  const SentencePool pool(cfg.get_int("sentences"), ctx.seed());
  // Independent jobs, each with its own generators (seeded from its seed index): job s
  // pre-trains and fine-tunes seed s, job seeds + s trains seed s's classifier from scratch.
  const auto n = static_cast<size_t>(w.seeds);
  std::vector<SeedRun> runs = kit::side_by_side(
      2 * n, [&](size_t j) { return run_part(w, ctx, pool, static_cast<int64_t>(j % n), j >= n); });
  for (size_t s = 0; s < n; ++s) runs[s].scratch = std::move(runs[n + s].scratch);
  runs.resize(n);
  report(w, pool, runs, ctx);
  compare(w, runs, ctx);
}

}  // namespace

Experiment bert_finetune() {
  Experiment e;
  e.name = "bert-finetune";
  e.source = "003 (BERT)";
  e.purpose = "BERT pre-training (masked LM + next sentence), then fine-tuning vs scratch";
  e.config.add_int("seeds", 3, "seeds (their spread sets the tolerances)", {.min = 1, .max = 20})
      .add_int("sentences", 4000, "corpus sentences (the last 10% held out)", {.min = 200})
      .add_int("labelled", 32, "labelled training sentences of the downstream task", {.min = 1})
      .add_int("finetune_steps", 150, "steps of fine-tuning and of scratch training", {.min = 1})
      .add_int("finetune_batch", 16, "sentences per fine-tuning step", {.min = 1})
      .add_real("finetune_lr", 1e-3, "fine-tuning and scratch learning rate", {.min = 0})
      .add_real("nsp_weight", 10,
                "weight of the next-sentence loss beside the masked-LM loss (BERT: 1)", {.min = 0});
  add_model_fields(e.config, {.d_model = 64, .nhead = 4, .num_layers = 2, .dim_ff = 128});
  add_optimizer_fields(
      e.config, {.steps = 600, .batch_size = 64, .lr = 1e-3, .schedule = "warmup", .warmup = 50});
  add_eval_fields(e.config, {.eval_size = 1000, .eval_every = 25});
  e.quick = {{"steps", "60"},  {"finetune_steps", "30"}, {"seeds", "2"},       {"eval_size", "200"},
             {"warmup", "10"}, {"eval_every", "15"},     {"sentences", "1000"}};
  e.check = [](const Config& c) {
    check_model(c);
    check_optimizer(c);
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
