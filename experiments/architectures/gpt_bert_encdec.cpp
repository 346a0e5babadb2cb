// gpt-bert-encdec [001 "architectures", 003 BERT / GPT]: the three ways to stack Transformer
// blocks, each trained here on a task it is built for.
//
//   attnlab run gpt-bert-encdec             # three small trainings, ~2 min on 2 cores
//   attnlab run gpt-bert-encdec --quick     # a few seconds each, for the tests
//
// 1. decoder-only (GPT): next-character prediction on the toy-grammar corpus (task charlm,
//    model gpt); held-out perplexity exp(mean NLL) beside two context-free guesses: uniform over
//    the characters (perplexity = their number) and the held-out character frequencies
//    (perplexity = exp(entropy)).
// 2. encoder-only (BERT): masked-language-model training (charlm, model bert). The corruption
//    rule (data/mlm.h) is measured by counting over many batches: the selected fraction of
//    ordinary tokens (15%), and of those the share shown as MASK (80%), as another token (10%)
//    and unchanged (10%). Counting compares input with original, so a random replacement that
//    draws the original token counts as unchanged: with R ordinary tokens the expected shares
//    are 0.1 (1 - 1/R) and 0.1 + 0.1/R. Masked-token accuracy on held-out windows is compared
//    with the best constant guess.
// 3. encoder-decoder (2017): string reversal (task reversal, model transformer), exact match.
// 4. the masks, read off the trained models (gpt_bert_masks.h).
// Step through: data::mlm_mask, then nn::scaled_dot_product_attention with masks.causal.
#include "data/mlm.h"
#include "data/tokenizer.h"
#include "experiments/architectures/gpt_bert_masks.h"
#include "experiments/common/trained_run.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/trained_model_report.h"
#include "nn/positional/position_kind.h"
#include "nn/transformer/encoder_only.h"
#include "train/run/task_model.h"

namespace attn::experiments {

namespace {

// The transformer sizes every part shares.
train::TrainConfig base_config(const Config& cfg, uint64_t seed) {
  train::TrainConfig t = transformer_config(cfg, seed);
  t.batch_size = cfg.get_int("batch");
  t.eval_size = cfg.get_int("eval_size");
  t.warmup = cfg.get_int("warmup");
  t.positional = cfg.get_string("positional");
  t.progress = "lines";
  return t;
}

train::TrainConfig lm_config(const Config& cfg, uint64_t seed, const std::string& model) {
  train::TrainConfig t = base_config(cfg, seed);
  t.task = "charlm";
  t.model = model;
  t.block_len = cfg.get_int("block_len");
  t.steps = cfg.get_int(model == "gpt" ? "gpt_steps" : "bert_steps");
  t.lr = cfg.get_real(model == "gpt" ? "gpt_lr" : "bert_lr");
  t.eval_every = t.steps;  // one evaluation, at the end
  t.target = 0;
  return t;
}

// ---- 1. decoder-only ----

// Returns GPT's held-out perplexity.
double decoder_only(const Config& cfg, RunContext& ctx, TrainedRun& gpt) {
  ctx.section("1. Decoder-only (GPT): next-character language model");
  const train::TrainSummary& s = gpt.summary;
  const double ppl = s.final_eval.at("perplexity");
  const kit::Unigram frequencies = kit::unigram(gpt.setup.heldout_set);
  const double unigram = std::exp(frequencies.entropy);
  const auto chars = static_cast<double>(frequencies.distinct);
  Table t("Held-out perplexity (lower is better)", {"predictor", "perplexity"});
  t.add_row({"uniform over the characters seen", fixed(chars, 1)});
  t.add_row({"character frequencies (no context)", fixed(unigram, 3)});
  t.add_row({fmt::format("GPT after {} steps", s.result.last_step), fixed(ppl, 3)});
  t.flag_last_row();
  ctx.table(t);
  ctx.note(fmt::format("{}; {:.1f} s of training over {} held-out windows of {} characters.",
                       s.model_description, s.result.wall_seconds, gpt.setup.heldout_set.size(),
                       cfg.get_int("block_len")));
  ctx.result("gpt_perplexity", ppl);
  ctx.result("unigram_perplexity", unigram);
  ctx.result("uniform_perplexity", chars);
  ctx.result("gpt_train_seconds", s.result.wall_seconds);
  return ppl;
}

// ---- 2. encoder-only ----

struct MaskRates {
  int64_t ordinary = 0, selected = 0, masked = 0, replaced = 0, unchanged = 0;
};

// Counts what mlm_mask does to the held-out windows, `passes` times with fresh draws.
MaskRates measure_masking(const std::vector<data::Example>& set,
                          int64_t vocab,
                          int64_t passes,
                          uint64_t seed) {
  Generator gen(seed);
  const data::Batch b = data::collate_language_model(set);
  const Tensor& ids = b.tgt_in;
  MaskRates r;
  for (int64_t i = 0; i < ids.numel(); ++i)
    r.ordinary += !data::Vocab::is_special(static_cast<int64_t>(ids[i]));
  r.ordinary *= passes;
  for (int64_t p = 0; p < passes; ++p) {
    const data::MlmBatch m = data::mlm_mask(ids, vocab, gen);
    for (int64_t i = 0; i < ids.numel(); ++i) {
      if (m.labels[i] == data::kIgnoreIndex) continue;
      ++r.selected;
      if (m.input[i] == data::kMask)
        ++r.masked;
      else if (m.input[i] == ids[i])
        ++r.unchanged;
      else
        ++r.replaced;
    }
  }
  return r;
}

struct MlmAccuracy {
  double model = 0, constant = 0;
  int64_t predicted = 0;
};

// Masks the held-out windows once (fixed seed) and scores the argmax at every selected position;
// `constant` is the best single-character guess on the same positions.
MlmAccuracy masked_accuracy(nn::EncoderOnlyTransformer& bert,
                            const std::vector<data::Example>& set,
                            int64_t vocab,
                            uint64_t seed) {
  Generator gen(seed);
  const data::Batch b = data::collate_language_model(set);
  const data::MlmBatch m = data::mlm_mask(b.tgt_in, vocab, gen);
  NoGrad off;
  const kit::ConstantGuess constant = kit::constant_guess(m.labels, data::kIgnoreIndex);
  const double model = kit::accuracy(bert.forward(m.input).value(), m.labels,  // (B,T,V), (B,T)
                                     data::kIgnoreIndex);
  return {model, constant.accuracy, constant.scored};
}

void encoder_only(const Config& cfg, RunContext& ctx, TrainedRun& bert, DocumentComparison& cmp) {
  ctx.section("2. Encoder-only (BERT): masked-language-model training");
  const auto& set = bert.setup.heldout_set;
  const int64_t vocab = bert.setup.heldout->tokenizer().vocab_size();
  const int64_t passes = cfg.get_int("mask_passes");
  const MaskRates r = measure_masking(set, vocab, passes, ctx.seed() * 7919 + 11);
  const auto frac = [](int64_t a, int64_t b) { return double(a) / double(b); };
  const double sel = frac(r.selected, r.ordinary), mask = frac(r.masked, r.selected),
               repl = frac(r.replaced, r.selected), same = frac(r.unchanged, r.selected);
  // The ordinary tokens a random replacement is drawn from.
  const auto ordinary_ids = static_cast<double>(vocab - data::kNumSpecial);
  const double expect_repl = 0.1 * (1 - 1 / ordinary_ids), expect_same = 0.1 + 0.1 / ordinary_ids;
  // A measured fraction of n draws has standard deviation sqrt(p (1-p) / n): the tolerance is
  // five of them, so it shrinks as the count grows and holds on any machine.
  const auto tol = [](double p, int64_t n) {
    return 5 * std::sqrt(p * (1 - p) / static_cast<double>(n));
  };
  Table t(fmt::format("Masking rule measured over {} passes of {} held-out windows", passes,
                      set.size()),
          {"quantity", "count", "measured", "rule"});
  t.add_row({"selected / ordinary tokens", std::to_string(r.selected), fixed(sel, 4), "0.15"});
  t.add_row({"shown as MASK / selected", std::to_string(r.masked), fixed(mask, 4), "0.80"});
  t.add_row({"another token / selected", std::to_string(r.replaced), fixed(repl, 4),
             fmt::format("0.10 (x (1 - 1/{}) = {:.4f})", ordinary_ids, expect_repl)});
  t.add_row({"unchanged / selected", std::to_string(r.unchanged), fixed(same, 4),
             fmt::format("0.10 (+ 0.1/{} = {:.4f})", ordinary_ids, expect_same)});
  ctx.table(t);
  ctx.note(fmt::format(
      "The counts compare each corrupted input with its original, so a random replacement that "
      "happens to draw the original character ({} ordinary characters: 1 in {}) is counted as "
      "unchanged. Tolerances below are 5 standard deviations of each measured fraction.",
      ordinary_ids, ordinary_ids));
  ctx.result("mask_selected_rate", sel);
  ctx.result("mask_mask_rate", mask);
  ctx.result("mask_random_rate", repl);
  ctx.result("mask_unchanged_rate", same);
  ctx.result("mask_selected_count", r.selected);
  ctx.result("mask_expected_random_rate", expect_repl);
  ctx.result("mask_expected_unchanged_rate", expect_same);

  auto* model = dynamic_cast<nn::EncoderOnlyTransformer*>(&bert.summary.model->module());
  if (!model) throw Error("gpt-bert-encdec: the bert model is not an EncoderOnlyTransformer");
  model->eval();
  const MlmAccuracy a = masked_accuracy(*model, set, vocab, ctx.seed() * 7919 + 13);
  Table acc("Masked-token accuracy on held-out windows", {"predictor", "accuracy"});
  acc.add_row({"best constant character", fixed(a.constant, 4)});
  acc.add_row(
      {fmt::format("BERT after {} steps", bert.summary.result.last_step), fixed(a.model, 4)});
  acc.flag_last_row();
  ctx.table(acc);
  ctx.note(fmt::format("{}; {:.1f} s of training; {} masked positions scored.",
                       bert.summary.model_description, bert.summary.result.wall_seconds,
                       a.predicted));
  ctx.result("mlm_accuracy", a.model);
  ctx.result("mlm_constant_accuracy", a.constant);
  ctx.result("mlm_scored_positions", a.predicted);
  ctx.result("bert_train_seconds", bert.summary.result.wall_seconds);

  cmp.add("BERT selects 15% of the tokens (003)", 0.15, sel, tol(0.15, r.ordinary), "", 4);
  cmp.add("of those, 80% become MASK (BERT's rule)", 0.8, mask, tol(0.8, r.selected), "", 4);
  cmp.add("10% become another token", 0.1, repl, tol(0.1, r.selected),
          fmt::format("a random draw equals the original 1 time in {}: expected {:.4f}",
                      ordinary_ids, expect_repl),
          4);
  cmp.add("10% stay unchanged", 0.1, same, tol(0.1, r.selected),
          fmt::format("those same-character draws count here: expected {:.4f}", expect_same), 4);
  cmp.add("another token, allowing for same-character draws", expect_repl, repl,
          tol(expect_repl, r.selected), "", 4);
  cmp.add("unchanged, allowing for same-character draws", expect_same, same,
          tol(expect_same, r.selected), "", 4);
  cmp.add_exact("BERT predicts masked tokens from context (beats the best constant guess)", "yes",
                kit::yes_no(a.model > a.constant),
                fmt::format("accuracy {:.4f} vs {:.4f}", a.model, a.constant));
}

// ---- 3. encoder-decoder ----

double encoder_decoder(RunContext& ctx, const TrainedRun& rev) {
  ctx.section("3. Encoder-decoder (2017): string reversal");
  const train::TrainSummary& s = rev.summary;
  const double exact = s.final_eval.at("exact_match");
  ctx.preformatted(kit::stop_line(s) +
                   fmt::format("\nheld-out exact match {:.4f}, token accuracy {:.4f}", exact,
                               s.final_eval.at("token_accuracy")));
  ctx.result("reversal_exact_match", exact);
  ctx.result("reversal_steps", s.result.last_step);
  ctx.result("reversal_train_seconds", s.result.wall_seconds);
  return exact;
}

// The held-out token accuracy of a reversal model that learned nothing but the alphabet: one
// character in A right by chance, plus five standard errors over the held-out characters. Below
// it the model did not train, and whether the architecture can learn the task stays unjudged.
double reversal_chance(const TrainedRun& rev) {
  const auto letters =
      static_cast<double>(rev.setup.heldout->tokenizer().vocab_size() - data::kNumSpecial);
  double chars = 0;
  for (const auto& ex : rev.setup.heldout_set) chars += static_cast<double>(ex.tgt.size());
  const double p = 1 / letters;
  return p + 5 * std::sqrt(p * (1 - p) / std::max(chars, 1.0));
}

struct ThreeConfigs {
  train::TrainConfig gpt, bert, reversal;
};

ThreeConfigs three_configs(const Config& cfg) {
  const auto seed = static_cast<uint64_t>(cfg.get_int("seed"));
  ThreeConfigs c{lm_config(cfg, seed, "gpt"), lm_config(cfg, seed, "bert"), base_config(cfg, seed)};
  train::TrainConfig& r = c.reversal;
  r.task = "reversal";
  r.model = "transformer";
  r.src_eos = cfg.get_bool("src_eos");
  r.steps = cfg.get_int("reversal_steps");
  r.lr = cfg.get_real("reversal_lr");
  r.eval_every = cfg.get_int("reversal_eval_every");
  r.target = cfg.get_real("target");
  return c;
}

void run(const Config& cfg, RunContext& ctx) {
  const ThreeConfigs c = three_configs(cfg);
  // The three models train side by side: each draws from its own seeded generators.
  std::vector<TrainedRun> runs = train_side_by_side({c.gpt, c.bert, c.reversal}, ctx,
                                                    {"train-gpt", "train-bert", "train-reversal"});
  TrainedRun &gpt = runs[0], &bert = runs[1], &rev = runs[2];
  const double perplexity = decoder_only(cfg, ctx, gpt);
  DocumentComparison cmp(fmt::format("001 and 003 vs ours ({} layers, d_model {}, {} heads)",
                                     cfg.get_int("layers"), cfg.get_int("d_model"),
                                     cfg.get_int("nhead")));
  const double unigram = ctx.results().at("unigram_perplexity").get<double>();
  cmp.add_exact("GPT learns next-token prediction (perplexity below the frequency guess)", "yes",
                kit::yes_no(perplexity < unigram),
                fmt::format("perplexity {:.3f} vs {:.3f}", perplexity, unigram));

  encoder_only(cfg, ctx, bert, cmp);

  const double exact = encoder_decoder(ctx, rev);
  const double token_accuracy = rev.summary.final_eval.at("token_accuracy");
  cmp.add_exact(fmt::format("the encoder-decoder learns a sequence-to-sequence task (reversal "
                            "exact match >= {:.2f})",
                            cfg.get_real("reversal_pass")),
                "yes", kit::yes_no(exact >= cfg.get_real("reversal_pass")),
                fmt::format("exact match {:.4f}, token accuracy {:.4f}", exact, token_accuracy))
      .needs_training(token_accuracy, reversal_chance(rev), "token accuracy");
  gpt_bert::masks(cfg, ctx, gpt, bert, rev, cmp);
  ctx.compare(cmp);
}

// "auto" and every scheme of nn/positional.
std::vector<std::string> position_choices() {
  std::vector<std::string> c{"auto"};
  for (const auto& n : nn::position_kind_names()) c.push_back(n);
  return c;
}

}  // namespace

Experiment gpt_bert_encdec() {
  Experiment e;
  e.name = "gpt-bert-encdec";
  e.source = "001 (architectures), 003 (BERT, GPT)";
  e.purpose = "Decoder-only LM, encoder-only MLM (80-10-10 measured), encoder-decoder; the masks";
  e.config.add_int("d_model", 64, "model width (all three models)", {.min = 1})
      .add_int("nhead", 4, "attention heads per layer (must divide d_model)", {.min = 1})
      .add_int("layers", 2, "layers per stack", {.min = 1})
      .add_int("dim_ff", 256, "feed-forward width", {.min = 1})
      .add_int("batch", 32, "sequences per step", {.min = 1})
      .add_int("warmup", 100, "warm-up steps of every training", {.min = 0})
      .add_string("positional", "auto",
                  "positions of all three models (auto: each model's own; none learned "
                  "sinusoidal rope alibi t5_bias)",
                  position_choices())
      .add_int("eval_size", 200, "held-out windows / sequences", {.min = 1})
      .add_int("block_len", 64, "characters per language-model window", {.min = 2})
      .add_int("gpt_steps", 300, "GPT training steps", {.min = 1})
      .add_real("gpt_lr", 3e-3, "GPT peak learning rate", {.min = 0})
      .add_int("bert_steps", 800, "BERT training steps", {.min = 1})
      .add_real("bert_lr", 1e-3, "BERT peak learning rate", {.min = 0})
      .add_int("mask_passes", 200, "masking draws over the held-out windows (rates)", {.min = 1})
      .add_int("reversal_steps", 1000, "most encoder-decoder steps (stops at --target)", {.min = 1})
      .add_real("reversal_lr", 3e-3, "encoder-decoder peak learning rate", {.min = 0})
      .add_int("reversal_eval_every", 100, "steps between reversal evaluations", {.min = 1})
      .add_real("target", 0.99, "stop reversal once held-out exact match reaches this", {.min = 0})
      .add_real("reversal_pass", 0.9, "exact match that counts as having learned reversal",
                {.min = 0, .max = 1})
      .add_bool("src_eos", true, "end each reversal source with EOS")
      .add_int("mask_length", 16, "characters in the mask heatmaps", {.min = 2})
      .add_int("seed", 1, "random seed", {.min = 0});
  e.quick = {{"gpt_steps", "60"},
             {"bert_steps", "60"},
             {"reversal_steps", "150"},
             {"eval_size", "50"},
             {"mask_passes", "40"},
             {"block_len", "32"},
             {"reversal_eval_every", "150"},
             {"warmup", "20"}};
  e.check = [](const Config& c) {
    require_divides(c, "nhead", "d_model");
    // Each training's own rules (warm-up shorter than the steps, memory, ...) before any folder.
    const ThreeConfigs t = three_configs(c);
    for (const train::TrainConfig* one : {&t.gpt, &t.bert, &t.reversal})
      train::validate_train_config(*one);
    if (c.get_int("mask_length") > c.get_int("block_len"))
      throw UsageError(
          fmt::format("gpt-bert-encdec: --mask_length {} must be at most --block_len {}",
                      c.get_int("mask_length"), c.get_int("block_len")));
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
