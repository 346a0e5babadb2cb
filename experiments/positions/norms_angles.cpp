// norms-angles [004 §2.3, §4.1]: q·k = |q| |k| cos θ in a trained character LM, inside and beyond
// its training length, and the shape of each layer's attention rows.
//
//   attnlab run norms-angles                       # 3 seeds of a 4-layer RoPE LM, ~1 min
//   attnlab run norms-angles --positions none --eval_len 512
//
// 004 §2.3 reads the score as three factors: |q_i| (only sharpens or flattens row i), |k_j| (an
// absolute signal of key j) and cos θ_ij (the only interaction). Turning angles in high
// dimension is hard, it says, so a model raises norms instead; the angles it trains stay a small
// set, longer inputs bring angles it never trained, and that is why attention fails to
// extrapolate. 004 §4.1 adds that the first layer attends almost uniformly and the middle ones
// put their weight on the first token and the latest ones (a "V").
// The run trains the same causal LM as length-extrapolation (the toy grammar, windows of
// --train_len characters) over --seeds seeds, reads held-out windows of --eval_len characters,
// and splits every head's scores into the three factors (norms_angles_probe.cpp, checked
// against the layer's own weights). Each claim is a row; its tolerance is three standard errors
// of the seeds' mean.
// Step through: norms::read_model (norms_angles_probe.cpp), then read_row for one row.
#include "data/corpus.h"
#include "experiments/kit/kit.h"
#include "experiments/positions/norms_angles_report.h"
#include "nn/transformer/decoder_only.h"

namespace attn::experiments {

namespace {

using norms::ModelReading, norms::SeedRun;

nn::DecoderOnlyOptions model_options(const Config& cfg, int64_t vocab) {
  nn::DecoderOnlyOptions o = kit::char_lm_options(read_model(cfg), vocab, cfg.get_int("eval_len"));
  o.positions = nn::position_kind_from_name(cfg.get_string("positions"), "--positions");
  return o;
}

// The first --eval_windows held-out windows of --eval_len characters.
std::vector<data::Example> heldout_windows(const Config& cfg, const data::CharCorpus& corpus) {
  const auto n = static_cast<size_t>(cfg.get_int("eval_windows"));
  std::vector<data::Example> all =
      kit::first_windows(corpus, cfg.get_int("eval_len"), cfg.get_int("eval_windows"));
  if (all.size() < n)
    throw Error(
        fmt::format("norms-angles: the held-out text holds {} windows of {}, fewer than "
                    "--eval_windows {}: raise --sentences",
                    all.size(), cfg.get_int("eval_len"), n));
  return all;
}

SeedRun train_and_read(const Config& cfg,
                       const RunContext& ctx,
                       const data::CharCorpus& corpus,
                       const std::vector<data::Example>& held,
                       int64_t seed_index) {
  const uint64_t seed = ctx.seed() + 1000 * static_cast<uint64_t>(seed_index);
  Generator init(seed), draw(seed + 1);
  nn::DecoderOnlyTransformer model(model_options(cfg, corpus.tokenizer().vocab_size()), init);
  const norms::ProbeSettings ps{cfg.get_int("train_len"), cfg.get_int("recent"), 8};
  SeedRun run;
  run.untrained = norms::read_model(model, held, ps);
  const data::LanguageModelTask task(corpus, cfg.get_int("train_len"), data::Split::kTrain);
  train::FitSettings s =
      kit::fit_settings(ctx, fmt::format("seed {}", seed_index + 1), read_optimizer(cfg));
  s.optimizer.d_model = model.options().d_model;  // for --schedule noam
  train::fit(model, s, [&](const train::BatchPart& part) {
    return kit::language_model_step(task, s.batch_size, draw, part,
                                    [&](const Tensor& ids) { return model.forward(ids); });
  });
  run.trained = norms::read_model(model, held, ps);
  return run;
}

// The accuracy of always guessing the training text's most frequent character, on the
// held-out text: what a model that learned nothing about context reaches.
double unigram_accuracy(const data::CharCorpus& corpus) {
  std::vector<int64_t> counts(static_cast<size_t>(corpus.tokenizer().vocab_size()), 0);
  for (int64_t id : corpus.train_ids()) ++counts[static_cast<size_t>(id)];
  const auto top = std::max_element(counts.begin(), counts.end()) - counts.begin();
  const std::vector<int64_t>& val = corpus.val_ids();
  return static_cast<double>(std::count(val.begin(), val.end(), top)) /
         static_cast<double>(val.size());
}

void run(const Config& cfg, RunContext& ctx) {
  const int64_t seeds = cfg.get_int("seeds");
  const data::CharCorpus corpus(data::toy_grammar_text(cfg.get_int("sentences"), 7), 0.1);
  const std::vector<data::Example> held = heldout_windows(cfg, corpus);
  ctx.section(fmt::format("A {}-layer character LM ({}), trained on {} characters, read on {}",
                          cfg.get_int("num_layers"), cfg.get_string("positions"),
                          cfg.get_int("train_len"), cfg.get_int("eval_len")));
  ctx.note(fmt::format(
      "{} seeds; each trains on {} batches of {} windows of {} characters of the toy grammar and "
      "is read on the first {} held-out windows of {} characters (positions < {} were inside "
      "every training window, the rest never were). q and k are recomputed from each block's "
      "input and checked against the weights the block used.",
      seeds, cfg.get_int("steps"), cfg.get_int("batch_size"), cfg.get_int("train_len"),
      cfg.get_int("eval_windows"), cfg.get_int("eval_len"), cfg.get_int("train_len")));
  // Independent seeds: each draws from its own generators (seeded from its index).
  const std::vector<SeedRun> runs = kit::side_by_side(static_cast<size_t>(seeds), [&](size_t s) {
    return train_and_read(cfg, ctx, corpus, held, static_cast<int64_t>(s));
  });
  const norms::Summaries sums = norms::summarise(runs);
  norms::report_tables(cfg, ctx, runs, sums);
  norms::report_figures(cfg, ctx, runs);
  norms::compare(cfg, ctx, sums, unigram_accuracy(corpus));
}

}  // namespace

Experiment norms_angles() {
  Experiment e;
  e.name = "norms-angles";
  e.source = "004 §2.3 (the dot product as norms and cosine), §4.1 (V-shaped attention)";
  e.purpose = "q.k = |q||k|cos: norms or angles beyond the training length; V-shaped rows";
  e.config.add_int("seeds", 3, "models trained (the spread of every row)", {.min = 1, .max = 20})
      .add_string("positions", "rope", "positional scheme of the LM", {"rope", "none"})
      .add_int("train_len", 32, "characters per training window", {.min = 8})
      .add_int("eval_len", 256, "characters per held-out window (> --train_len)", {.min = 9})
      .add_int("eval_windows", 16, "held-out windows read", {.min = 1})
      .add_int("recent", 4, "the 'most recent' keys of a row (the V's right arm)", {.min = 1})
      .add_int("sentences", 4000, "toy-grammar sentences (10% held out)", {.min = 10})
      .add_int("seed", 1, "random seed (weights, batches)", {.min = 0});
  add_model_fields(e.config, {.d_model = 64, .nhead = 4, .num_layers = 4, .dim_ff = 256});
  add_optimizer_fields(e.config, {.steps = 600,
                                  .batch_size = 32,
                                  .lr = 3e-3,
                                  .schedule = "cosine",
                                  .warmup = 50,
                                  .clip = 1.0});
  e.quick = {{"steps", "60"},    {"warmup", "10"},      {"seeds", "2"},
             {"eval_len", "64"}, {"eval_windows", "4"}, {"sentences", "1000"}};
  e.check = [](const Config& c) {
    require_divides(c, "nhead", "d_model");
    if ((c.get_int("d_model") / c.get_int("nhead")) % 2)
      throw UsageError("norms-angles: rope needs an even d_model / nhead");
    if (c.get_int("steps") <= c.get_int("warmup"))
      throw UsageError(fmt::format("norms-angles: --steps ({}) must exceed --warmup ({})",
                                   c.get_int("steps"), c.get_int("warmup")));
    if (c.get_int("eval_len") <= c.get_int("train_len"))
      throw UsageError(fmt::format("norms-angles: --eval_len ({}) must exceed --train_len ({})",
                                   c.get_int("eval_len"), c.get_int("train_len")));
    if (c.get_int("train_len") / 2 <= c.get_int("recent") + 1)
      throw UsageError(fmt::format(
          "norms-angles: --recent {} leaves no middle keys in rows of {} (needs < {})",
          c.get_int("recent"), c.get_int("train_len") / 2, c.get_int("train_len") / 2 - 1));
    if (c.get_int("num_layers") < 3)
      throw UsageError(
          "norms-angles: --num_layers must be at least 3 (a first, a middle and a "
          "last layer)");
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
