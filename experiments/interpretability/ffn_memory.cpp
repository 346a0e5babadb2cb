// ffn-memory [001, the transformer block]: the feed-forward block as a key-value memory. 001
// says the first layer's weights are keys that match input patterns, the second layer's are the
// values retrieved when they match, and that this is why a larger feed-forward block holds more
// facts. Three measurements:
//   1. a character GPT trained on the built-in corpus; for its last block's strongest keys (rows
//      of linear1), the held-out contexts that fire each key most;
//   2. the characters each key's value (a column of linear2) pushes up through the final norm and
//      the unembedding, and how often those are the actual next characters of the key's contexts,
//      against the same count with the values dealt to other keys (shuffled: chance for this
//      text);
//   3. a toy set of facts ("qzk=m": a random letter for each three-letter name) memorised by a
//      one-block model at several dim_feedforward widths over seeds: recall against width; every
//      feed-forward block a --plugin adds (nn/feedforward_registry.h) runs beside the built-in
//      one at the same widths and seeds (parts 1 and 2 read linear1/linear2: built-in only).
//
//   attnlab run ffn-memory                       # ~1 min on 2 cores (75 s of CPU)
//   attnlab run ffn-memory --widths 4,16,64,256 --seeds 5
//   attnlab run ffn-memory --plugin build/libreglu.so   # part 3 also for the plugin's block
//
// Step through: batch_keys() in ffn_memory_keys.cpp rebuilds the last block from its parts (keys
// m = act(linear1(LN2(a))), then a + linear2(m)) and checks the logits equal the model's.
#include "data/corpus.h"
#include "experiments/interpretability/ffn_memory_facts.h"
#include "experiments/interpretability/ffn_memory_keys.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/spread.h"
#include "experiments/kit/trained_model_report.h"
#include "nn/feedforward_registry.h"
#include "nn/transformer/decoder_only.h"

namespace attn::experiments {

namespace {

struct TrainedLm {
  std::shared_ptr<nn::DecoderOnlyTransformer> model;
  double nll = 0, unigram = 0;  // held-out nats per character: the model, character frequencies
};

// A character GPT on the built-in corpus (Adam and the optimizer group's schedule, train::fit),
// scored on the held-out windows.
TrainedLm train_lm(const Config& cfg,
                   const data::CharCorpus& corpus,
                   const std::vector<data::Example>& windows,
                   RunContext& ctx) {
  const auto m = read_model(cfg);
  nn::DecoderOnlyOptions o;
  o.vocab_size = corpus.tokenizer().vocab_size();
  o.max_len = read_data(cfg).block_len;
  o.d_model = m.d_model, o.nhead = m.nhead, o.num_layers = m.num_layers;
  o.dim_feedforward = m.dim_ff;
  Generator init(ctx.seed()), data_gen(ctx.seed() * 7919 + 1);
  TrainedLm lm{std::make_shared<nn::DecoderOnlyTransformer>(o, init), 0,
               kit::unigram(windows).entropy};
  const data::LanguageModelTask task(corpus, o.max_len, data::Split::kTrain);
  train::FitSettings s = kit::fit_settings(ctx, "character lm", read_optimizer(cfg));
  train::fit(*lm.model, s, [&](const train::BatchPart& part) {
    return kit::language_model_step(task, s.batch_size, data_gen, part,
                                    [&](const Tensor& ids) { return lm.model->forward(ids); });
  });
  NoGrad off;
  lm.model->eval();
  kit::NextTokenNll nll;
  for (const auto& part : kit::chunks(windows, 32)) {
    const data::Batch b = data::collate_language_model(part);
    nll.add(lm.model->forward(b.tgt_in).value(), b.tgt_out, data::kIgnoreIndex);
  }
  lm.nll = nll.mean();
  return lm;
}

// A character as the report shows it: a space as "␣", a newline as "⏎".
std::string shown(const data::Tokenizer& tok, int64_t id) {
  const std::string c = tok.decode({id});
  return c == " " ? "␣" : c == "\n" ? "⏎" : c;
}

// The `width` characters up to and including a row's position, then "→" and the next one.
std::string context_text(const data::Tokenizer& tok,
                         const std::vector<data::Example>& windows,
                         const KeyActivations& a,
                         int64_t row,
                         int64_t width) {
  const auto& src = windows[static_cast<size_t>(row / a.block_len)].src;
  const int64_t pos = row % a.block_len;
  std::string s;
  for (int64_t p = std::max<int64_t>(0, pos - width + 1); p <= pos; ++p)
    s += shown(tok, src[static_cast<size_t>(p)]);
  return s + " → " + shown(tok, a.next[static_cast<size_t>(row)]);
}

void report_keys(const std::vector<KeyReading>& keys,
                 const data::Tokenizer& tok,
                 const std::vector<data::Example>& windows,
                 const KeyActivations& a,
                 RunContext& ctx) {
  Table t(
      "The last block's strongest keys: top-firing held-out contexts (→ the next character) "
      "and the characters the key's value promotes",
      {"key", "mean top activation", "top 3 contexts", "value promotes", "agreement"});
  for (const KeyReading& k : keys) {
    std::vector<std::string> contexts, promoted;
    for (size_t i = 0; i < std::min<size_t>(3, k.rows.size()); ++i)
      contexts.push_back(context_text(tok, windows, a, k.rows[i], 10));
    for (int64_t c : k.promoted) promoted.push_back(shown(tok, c));
    t.add_row({std::to_string(k.key), fixed(k.strength, 3),
               fmt::format("{}", fmt::join(contexts, "  |  ")),
               fmt::format("{}", fmt::join(promoted, " ")), fixed(k.agreement, 2)});
  }
  ctx.table(t);
}

struct WidthRecall {
  int64_t width = 0, ffn_parameters = 0;
  std::vector<double> recalls;  // one per seed
  kit::Spread spread;
};

// One feed-forward block's recall at every width over the seeds ("" for the built-in block).
struct BlockRecall {
  std::string block;
  std::vector<WidthRecall> widths;
  std::string label() const { return block.empty() ? "built-in (GELU)" : block; }
};

// The table: one row per width, and per block when a plugin added feed-forward blocks.
void report_recall_table(const std::vector<BlockRecall>& blocks, RunContext& ctx) {
  const bool several = blocks.size() > 1;
  std::vector<std::string> columns{"dim_feedforward", "FFN parameters", "recall per seed", "mean",
                                   "sd"};
  if (several) columns.insert(columns.begin(), "block");
  Table t("Recall of the memorised facts (share whose letter is the top prediction)", columns);
  for (const BlockRecall& b : blocks)
    for (const WidthRecall& r : b.widths) {
      std::vector<std::string> per_seed;
      for (double x : r.recalls) per_seed.push_back(fixed(x, 3));
      std::vector<std::string> row{std::to_string(r.width), std::to_string(r.ffn_parameters),
                                   fmt::format("{}", fmt::join(per_seed, " ")),
                                   fixed(r.spread.mean, 3), fixed(r.spread.sd, 3)};
      if (several) row.insert(row.begin(), b.label());
      t.add_row(row);
    }
  ctx.table(t);
}

void report_recall_figure(const std::vector<BlockRecall>& blocks,
                          int64_t seeds,
                          int64_t n_facts,
                          RunContext& ctx) {
  LinePlot p = kit::line_plot("Memorised facts against the feed-forward width", "dim_feedforward",
                              "recall (share of facts)", kit::Axes::kLogX);
  for (const BlockRecall& b : blocks) {
    const std::vector<double> widths = kit::column(b.widths, &WidthRecall::width);
    p.series.push_back({b.block.empty() ? "mean over seeds" : b.block + " (mean over seeds)",
                        widths,
                        kit::column(b.widths, [](const WidthRecall& r) { return r.spread.mean; })});
    if (!b.block.empty()) continue;  // the seeds of the built-in block only: a readable figure
    for (size_t seed = 0; seed < static_cast<size_t>(seeds); ++seed)
      p.series.push_back(
          {fmt::format("seed {}", seed), widths,
           kit::column(b.widths, [&](const WidthRecall& r) { return r.recalls[seed]; })});
  }
  p.refs = {{RefLine::kHorizontal, 1.0 / kFactLetters, "chance (1/26)"}};
  ctx.figure(
      "recall_vs_width", line_plot_svg(p),
      fmt::format("Recall of {} facts by one-block models of increasing feed-forward width{}",
                  n_facts, blocks.size() > 1 ? ", the built-in block and the plugins'" : ""));
}

// The built-in block first, then every feed-forward block a --plugin added, at the same widths,
// seeds, facts and batches.
std::vector<BlockRecall> facts_part(const Config& cfg, RunContext& ctx) {
  Generator fact_gen(ctx.seed() * 31 + 5);
  const FactSet facts = draw_facts(cfg.get_int("facts"), fact_gen);
  const FactSettings s{.d_model = cfg.get_int("fact_d_model"),
                       .nhead = cfg.get_int("fact_nhead"),
                       .steps = cfg.get_int("fact_steps")};
  ctx.section(fmt::format("Memorised facts against dim_feedforward ({} facts, e.g. {}, {})",
                          facts.size(), facts.text(0), facts.text(1)));
  std::vector<std::string> names{""};
  for (const nn::FeedForwardRow& row : nn::feed_forward_registry().rows())
    names.push_back(row.name);
  const std::vector<int64_t> widths = cfg.get_ints("widths");
  const size_t nw = widths.size(), ns = static_cast<size_t>(cfg.get_int("seeds"));
  // Run i: block names[i / (nw ns)], width widths[(i / ns) % nw], seed i % ns. The runs are
  // independent (each its own generators; the facts are only read): they train side by side.
  const std::vector<FactRun> runs = kit::side_by_side(names.size() * nw * ns, [&](size_t i) {
    return train_facts(facts, s, widths[(i / ns) % nw], ctx.seed() + i % ns, ctx,
                       names[i / (nw * ns)]);
  });
  std::vector<BlockRecall> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i % (nw * ns) == 0) out.push_back({runs[i].block, {}});
    if (i % ns == 0) out.back().widths.push_back({runs[i].width});
    WidthRecall& r = out.back().widths.back();
    r.recalls.push_back(runs[i].recall);
    r.ffn_parameters = runs[i].ffn_parameters;
    if (i % ns == ns - 1) r.spread = kit::spread_of(r.recalls);
  }
  report_recall_table(out, ctx);
  report_recall_figure(out, cfg.get_int("seeds"), facts.size(), ctx);
  return out;
}

void compare_keys(const Agreement& g,
                  const KeyActivations& a,
                  const TrainedLm& lm,
                  int64_t pairs,
                  RunContext& ctx) {
  const double margin = g.ours - (g.shuffled.mean + 3 * g.shuffled.sd);
  DocumentComparison cmp(
      "001 (the transformer block): the feed-forward block as keys and values vs ours");
  // Both paths compute the same float32 sums, perhaps in another order or fused: the rounding
  // bound of a sum of n terms is n units of 2^-24 of its scale, with n = d_model + d_ff (the
  // longest sums, linear2's d_ff terms and the unembedding's d_model) and the largest logit.
  const nn::DecoderOnlyOptions& o = lm.model->options();
  const double rounding = static_cast<double>(o.d_model + o.dim_feedforward) *
                          std::ldexp(1.0, -24) * std::max(1.0, a.max_logit);
  cmp.add("logits rebuilt from the last block's keys and values equal the model's (max |diff|)",
          0.0, a.rebuild_gap, rounding, "the block is not the sum of its values", 7);
  cmp.add_exact(
         "a key's value promotes the next characters of the contexts that fire it (above shuffled "
         "keys)",
         "yes", kit::yes_no(margin > 0),
         fmt::format("agreement {:.3f} against {:.3f} ± {:.3f} with shuffled values", g.ours,
                     g.shuffled.mean, g.shuffled.sd))
      .not_judged_if(lm.nll >= lm.unigram,
                     "the model predicts no better than character frequencies")
      .needs_samples(pairs, 100);
  ctx.compare(cmp);
}

void compare_facts(const std::vector<WidthRecall>& rs, int64_t n_facts, RunContext& ctx) {
  // Tolerance of a rise: three standard deviations of the difference of two means over seeds,
  // never below three standard errors of a rate on n_facts facts (which few seeds can miss).
  const double floor = 1.5 / std::sqrt(static_cast<double>(n_facts));
  auto rises = [&](const WidthRecall& lo, const WidthRecall& hi) {
    const double sd = std::sqrt(lo.spread.sd * lo.spread.sd + hi.spread.sd * hi.spread.sd);
    return hi.spread.mean - lo.spread.mean > std::max(3 * sd, floor);
  };
  const double learned = 1.0 / kFactLetters + floor;
  DocumentComparison cmp(fmt::format(
      "001 (the transformer block): a larger feed-forward block stores more facts vs ours (mean "
      "of {} seeds)",
      rs.front().recalls.size()));
  cmp.add_exact("recall of memorised facts rises with dim_feedforward (narrowest to widest)", "yes",
                kit::yes_no(rises(rs.front(), rs.back())),
                fmt::format("recall {:.3f} at {} and {:.3f} at {}", rs.front().spread.mean,
                            rs.front().width, rs.back().spread.mean, rs.back().width));
  for (size_t i = 1; i < rs.size(); ++i)
    cmp.add_exact(
           fmt::format("recall rises from dim_feedforward {} to {}", rs[i - 1].width, rs[i].width),
           "yes", kit::yes_no(rises(rs[i - 1], rs[i])),
           fmt::format("{:.3f} ± {:.3f} then {:.3f} ± {:.3f}", rs[i - 1].spread.mean,
                       rs[i - 1].spread.sd, rs[i].spread.mean, rs[i].spread.sd))
        .needs_training(rs[i].spread.mean, learned, "recall at the wider width");
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  const data::CharCorpus corpus(data::toy_grammar_text(cfg.get_int("sentences"), 7));
  const data::Tokenizer& tok = corpus.tokenizer();
  const std::vector<data::Example> windows =
      kit::first_windows(corpus, read_data(cfg).block_len, read_eval(cfg).eval_size);
  ctx.section("A character GPT trained on the built-in corpus");
  const TrainedLm lm = train_lm(cfg, corpus, windows, ctx);
  ctx.note(
      fmt::format("Held-out: {:.3f} nats per character ({} windows); character frequencies "
                  "alone: {:.3f}.",
                  lm.nll, windows.size(), lm.unigram));

  ctx.section("The last feed-forward block as keys and values");
  const KeyActivations a = last_block_keys(*lm.model, windows);
  std::vector<bool> is_char(static_cast<size_t>(tok.vocab_size()));
  for (int64_t c = data::kNumSpecial; c < tok.vocab_size(); ++c)
    is_char[static_cast<size_t>(c)] = true;
  const KeyReadingOptions o{cfg.get_int("keys"), cfg.get_int("contexts"), cfg.get_int("promoted")};
  const std::vector<KeyReading> keys = read_top_keys(a, value_logits(*lm.model), is_char, o);
  report_keys(keys, tok, windows, a, ctx);
  Generator shuffle_gen(ctx.seed() + 101);
  const Agreement g = agreement_against_shuffled(keys, a, cfg.get_int("shuffles"), shuffle_gen);
  ctx.note(
      fmt::format("Promoted characters agree with the actual next character in {:.3f} of the "
                  "{} top contexts; with the values dealt to other keys: {:.3f} ± {:.3f}.",
                  g.ours, o.keys * o.contexts, g.shuffled.mean, g.shuffled.sd));
  kit::record(ctx, {{"heldout_nll", lm.nll},
                    {"unigram_nll", lm.unigram},
                    {"rebuild_gap", a.rebuild_gap},
                    {"agreement", g.ours},
                    {"agreement_shuffled_mean", g.shuffled.mean},
                    {"agreement_shuffled_sd", g.shuffled.sd},
                    {"agreement_per_key", kit::column(keys, &KeyReading::agreement)}});
  const std::vector<BlockRecall> blocks = facts_part(cfg, ctx);
  kit::record(ctx, {{"fact_widths", cfg.get_ints("widths")}});
  for (const BlockRecall& b : blocks) {
    const std::string suffix = b.block.empty() ? "" : "_" + b.block;
    kit::record(ctx, {{"fact_recall_mean" + suffix,
                       kit::column(b.widths, [](const WidthRecall& r) { return r.spread.mean; })},
                      {"fact_recall_sd" + suffix,
                       kit::column(b.widths, [](const WidthRecall& r) { return r.spread.sd; })}});
  }
  if (blocks.size() > 1)
    ctx.note(
        "The plugins' feed-forward blocks run in the facts part only: the keys-and-values parts "
        "read the built-in block's linear1 and linear2, which a plugin's block need not have. The "
        "claims below judge the built-in block.");
  compare_keys(g, a, lm, o.keys * o.contexts, ctx);
  compare_facts(blocks.front().widths, cfg.get_int("facts"), ctx);
}

}  // namespace

Experiment ffn_memory() {
  Experiment e;
  e.name = "ffn-memory";
  e.source = "001 (the transformer block)";
  e.purpose = "The feed-forward block read as a key-value memory; memorised facts against width";
  e.config.add_int("sentences", 4000, "sentences of the built-in corpus",
                   {.min = 200, .max = 100000});
  e.config.add_int("keys", 16, "strongest keys read", {.min = 2, .max = 4096});
  e.config.add_int("contexts", 20, "top-firing contexts per key", {.min = 1, .max = 1000});
  e.config.add_int("promoted", 3, "top characters per value", {.min = 1, .max = 20});
  e.config.add_int("shuffles", 200, "random value deals for the chance level",
                   {.min = 2, .max = 100000});
  e.config.add_int("facts", 512, "facts to memorise", {.min = 10, .max = 17576});
  e.config.add_ints("widths", {8, 32, 128}, "dim_feedforward of the fact models (increasing)");
  e.config.add_int("seeds", 3, "seeds per width (their spread sets the tolerances)",
                   {.min = 1, .max = 20});
  e.config.add_int("fact_steps", 1500, "training steps per fact model", {.min = 1, .max = 1000000});
  e.config.add_int("fact_d_model", 32, "width of the fact models", {.min = 2, .max = 1024});
  e.config.add_int("fact_nhead", 2, "heads of the fact models", {.min = 1, .max = 64});
  add_model_fields(e.config, {.d_model = 64, .nhead = 4, .num_layers = 2, .dim_ff = 256});
  add_optimizer_fields(
      e.config, {.steps = 600, .batch_size = 32, .lr = 3e-3, .schedule = "cosine", .warmup = 50});
  add_data_fields(e.config, {.block_len = 64});
  add_eval_fields(e.config, {.eval_size = 200});
  e.quick = {{"steps", "40"},       {"warmup", "10"}, {"eval_size", "50"}, {"shuffles", "50"},
             {"fact_steps", "100"}, {"seeds", "2"},   {"facts", "128"}};
  e.check = [](const Config& c) {
    check_model(c);
    check_optimizer(c);
    const std::vector<int64_t>& w = c.get_ints("widths");
    if (w.size() < 2 || !std::is_sorted(w.begin(), w.end()) || w.front() < 1 ||
        std::adjacent_find(w.begin(), w.end()) != w.end())
      throw UsageError("ffn-memory: --widths must hold at least two increasing positive widths");
    if (c.get_int("fact_d_model") % c.get_int("fact_nhead") != 0)
      throw UsageError(fmt::format("ffn-memory: --fact_nhead {} must divide --fact_d_model {}",
                                   c.get_int("fact_nhead"), c.get_int("fact_d_model")));
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
