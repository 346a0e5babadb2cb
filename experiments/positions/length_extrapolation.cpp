// length-extrapolation [000 §VIII, 001 (positional encoding, ALiBi), 004 §4.1 (window truncation)]:
// train a small character language model on windows of 32 characters with each positional
// scheme, then read longer texts (32 to 512 characters) and measure next-character accuracy.
//
//   attnlab run length-extrapolation                          # ~40 s on 2 cores
//   attnlab run length-extrapolation --eval_lengths 32,64,128 --variants rope,alibi
//
// Why this task: the documents' claim ("train short, test long") is about language models, and
// it is only meaningful where the answer needs no more context than training provided. The toy
// grammar (data/corpus.h) is such a text: the next character depends on the current sentence
// (about 40 characters) and nothing before it, so a model that handled its positions well
// should score at least as well on 512 characters as on 32 (more positions have a full
// sentence of context). Whatever it loses at longer lengths is lost to positions and
// distances it never saw. A task that needs the whole input (copy, reversal) would fail for
// every scheme at 16x the length and say nothing about the schemes.
//
// Variants: the six schemes of nn/positional/position_kind.h with full causal attention, and a
// sliding window (DecoderOnlyOptions::attention_window) with RoPE, as in Mistral. Learned
// positions have no vector for position 32 and beyond: longer texts are read by a copy of the
// trained model whose table repeats its last trained row (every later position looks like the
// last trained one — untrained rows would only measure their random initialisation); sinusoidal
// positions are a formula and are computed as far as needed.
// A claim about extrapolation needs a model that learned something in range: each claim row is
// `not judged` unless its variants beat the bigram guess (the next character from the current
// one alone) at the training length by five standard errors.
// Beside accuracy, the attention mass the model puts on keys farther away than any distance it
// was trained on (at the longest length) shows where the lost accuracy goes.
// Step through: DecoderOnlyTransformer::forward (the masks and biases), then evaluate() below.
#include "data/corpus.h"
#include "experiments/kit/kit.h"
#include "experiments/positions/length_extrapolation_claims.h"
#include "nn/positional/score_bias_registry.h"
#include "nn/transformer/decoder_only.h"

namespace attn::experiments {

namespace {

using extrapolation::compare_with_documents, extrapolation::VariantRun;

const std::vector<std::string> kVariants = {"none",  "learned", "sinusoidal", "rope",
                                            "alibi", "t5_bias", "window"};

// The variants --variants takes: the built-ins, then every registered score bias (a plugin's
// positional scheme, nn/positional/score_bias_registry.h), which runs with no other positions.
std::vector<std::string> known_variants() {
  std::vector<std::string> names = kVariants;
  for (const nn::ScoreBiasRow& row : nn::score_bias_registry().rows()) names.push_back(row.name);
  return names;
}

// "rope,alibi" -> {"rope", "alibi"}; throws attn::UsageError for an unknown or repeated name.
std::vector<std::string> parse_variants(const std::string& text) {
  const std::vector<std::string> known = known_variants();
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= text.size()) {
    const size_t comma = std::min(text.find(',', from), text.size());
    const std::string v = text.substr(from, comma - from);
    if (std::find(known.begin(), known.end(), v) == known.end())
      throw UsageError(fmt::format(
          "length-extrapolation: --variants: unknown '{}' (choose from {}, or a score bias "
          "from --plugin FILE.so)",
          v, fmt::join(known, " ")));
    if (std::find(out.begin(), out.end(), v) != out.end())
      throw UsageError(fmt::format("length-extrapolation: --variants: '{}' twice", v));
    out.push_back(v);
    from = comma + 1;
  }
  return out;
}

nn::DecoderOnlyOptions model_options(const Config& cfg, const std::string& variant, int64_t vocab) {
  const std::vector<int64_t> lengths = cfg.get_ints("eval_lengths");
  const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  // Learned: one trained row per training position, no more. Sinusoidal: the formula's rows up
  // to the longest evaluation (training reads only the first train_len of them).
  nn::DecoderOnlyOptions o =
      kit::char_lm_options(read_model(cfg), vocab,
                           variant == "learned" ? cfg.get_int("train_len")
                                                : std::max(longest, cfg.get_int("train_len")));
  const bool window = variant == "window";
  if (nn::score_bias_registry().find(variant)) {  // a plugin's scheme, alone
    o.positions = nn::PositionKind::kNone;
    o.score_bias = variant;
  } else {
    o.positions = nn::position_kind_from_name(window ? "rope" : variant, "--variants");
  }
  if (window) o.attention_window = cfg.get_int("window");
  return o;
}

struct Evaluation {
  double accuracy = 0, loss = 0;
  double far_mass = 0;  // attention on keys farther than train_len - 1 (queries >= train_len)
  int64_t scored = 0;   // characters scored
};

// Next-character accuracy and mean loss over every position of `windows`, in batches.
Evaluation evaluate(nn::DecoderOnlyTransformer& model,
                    const std::vector<data::Example>& windows,
                    int64_t train_len,
                    int64_t batch) {
  NoGrad off;
  model.eval();
  Evaluation e;
  kit::Accuracy right;
  int64_t far_rows = 0;
  for (const auto& part : kit::chunks(windows, static_cast<size_t>(batch))) {
    const data::Batch b = data::collate_language_model(part);  // windows: tgt_in = src
    const Var logits = model.forward(b.tgt_in);
    const int64_t n = b.tgt_in.numel(), t = b.tgt_in.size(1);
    e.loss += cross_entropy(logits, b.tgt_out).item() * static_cast<double>(n);
    right.add(logits.value(), b.tgt_out);
    // Attention mass beyond the trained distances, every layer and head, queries i >= train_len.
    for (size_t k = 0; k < model.layers->size(); ++k) {
      const Tensor& w = (*model.layers)[k].self_attn->last_weights();  // (B,H,T,T)
      if (w.rank() != 4 || w.size(2) != t || w.size(3) != t)
        throw Error("length-extrapolation: block " + std::to_string(k) +
                    " recorded no (B,H,T,T) attention weights");
      const int64_t rows = w.size(0) * w.size(1);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t i = train_len; i < t; ++i) {
          const real* row = w.data() + (r * t + i) * t;
          double far = 0;
          for (int64_t j = 0; j + train_len <= i; ++j) far += row[j];
          e.far_mass += far;
          ++far_rows;
        }
    }
  }
  e.scored = right.scored();
  e.accuracy = right.value();
  e.loss /= static_cast<double>(e.scored);
  e.far_mass = far_rows > 0 ? e.far_mass / static_cast<double>(far_rows) : 0;
  model.train();
  return e;
}

// A copy of a trained learned-position model whose table reaches `len` positions: the rows past
// training repeat the last trained row, so every later position reads as the last trained one.
std::unique_ptr<nn::DecoderOnlyTransformer> repeat_last_position(
    const nn::DecoderOnlyTransformer& trained, nn::DecoderOnlyOptions o, int64_t len) {
  const int64_t trained_len = o.max_len;
  o.max_len = len;
  Generator unused(0);  // every weight is overwritten below
  auto longer = std::make_unique<nn::DecoderOnlyTransformer>(o, unused);
  TensorMap state = trained.state_dict();
  const Tensor& table = state.at("pos_emb.weight");  // (trained_len, d)
  const int64_t d = table.size(1);
  Tensor extended({len, d});
  for (int64_t p = 0; p < len; ++p)
    std::copy_n(table.data() + std::min(p, trained_len - 1) * d, d, extended.data() + p * d);
  state["pos_emb.weight"] = extended;
  longer->load_state_dict(state);
  return longer;
}

VariantRun train_and_measure(const Config& cfg,
                             const RunContext& ctx,
                             const std::string& variant,
                             const data::CharCorpus& corpus,
                             uint64_t seed) {
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t train_len = cfg.get_int("train_len");
  Generator init(seed);
  nn::DecoderOnlyTransformer model(model_options(cfg, variant, corpus.tokenizer().vocab_size()),
                                   init);
  train::FitSettings fs = kit::fit_settings(ctx, variant, read_optimizer(cfg));
  fs.optimizer.d_model = cfg.get_int("d_model");  // for --schedule noam
  const data::LanguageModelTask train_task(corpus, train_len, data::Split::kTrain);
  Generator draw(seed * 1000 + 1);  // the same batches for every variant
  train::fit(model, fs, [&](const train::BatchPart& part) {
    return kit::language_model_step(train_task, fs.batch_size, draw, part,
                                    [&](const Tensor& ids) { return model.forward(ids); });
  });
  VariantRun r;
  r.name = variant;
  const int64_t eval_chars = cfg.get_int("eval_chars");
  const std::vector<int64_t> lengths = cfg.get_ints("eval_lengths");
  std::unique_ptr<nn::DecoderOnlyTransformer> longer;  // learned: reads past train_len
  if (variant == "learned" && lengths.back() > train_len)
    longer = repeat_last_position(
        model, model_options(cfg, variant, corpus.tokenizer().vocab_size()), lengths.back());
  for (int64_t len : lengths) {
    nn::DecoderOnlyTransformer& reader = longer && len > train_len ? *longer : model;
    // The same first eval_chars characters of the validation text at every length.
    const std::vector<data::Example> windows =
        kit::first_windows(corpus, len, std::max<int64_t>(1, eval_chars / len));
    const Evaluation e = evaluate(reader, windows, train_len,
                                  std::max<int64_t>(1, cfg.get_int("eval_tokens") / len));
    r.accuracy.push_back(e.accuracy), r.loss.push_back(e.loss), r.far_mass.push_back(e.far_mass);
    r.scored.push_back(e.scored);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string variant_title(const std::string& v, const Config& cfg) {
  return v == "window" ? fmt::format("rope + window {}", cfg.get_int("window")) : v;
}

// Next-character accuracy of the bigram guess (the most frequent follower of each character in
// the training text) over the first `chars` held-out characters: what the current character
// alone gives, with no position or context. A model not clearly above it learned nothing that
// positions could matter for.
double bigram_accuracy(const data::CharCorpus& corpus, int64_t chars) {
  const auto vocab = static_cast<size_t>(corpus.tokenizer().vocab_size());
  std::vector<std::vector<int64_t>> follows(vocab, std::vector<int64_t>(vocab, 0));
  const std::vector<int64_t>& train = corpus.train_ids();
  for (size_t i = 0; i + 1 < train.size(); ++i)
    ++follows[static_cast<size_t>(train[i])][static_cast<size_t>(train[i + 1])];
  const std::vector<int64_t>& val = corpus.val_ids();
  const size_t n = std::min(val.size() - 1, static_cast<size_t>(chars));
  int64_t right = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto& f = follows[static_cast<size_t>(val[i])];
    right += std::max_element(f.begin(), f.end()) - f.begin() == val[i + 1];
  }
  return static_cast<double>(right) / static_cast<double>(n);
}

void run(const Config& cfg, RunContext& ctx) {
  const int64_t train_len = cfg.get_int("train_len");
  const std::vector<int64_t> lengths = cfg.get_ints("eval_lengths");
  const std::vector<std::string> variants = parse_variants(cfg.get_string("variants"));
  const data::CharCorpus corpus(data::toy_grammar_text(cfg.get_int("sentences"), 7), 0.1);
  ctx.section(fmt::format("Character LM on the toy grammar, trained on {} characters", train_len));
  ctx.note(fmt::format(
      "Every variant: a {}-layer decoder (d_model {}, {} heads), the same initial seed and the "
      "same {} batches of {} windows of {} characters. Evaluation: the first {} characters of "
      "the held-out text, cut into windows of each length; accuracy = the most likely next "
      "character is the right one, over every position.",
      cfg.get_int("num_layers"), cfg.get_int("d_model"), cfg.get_int("nhead"), cfg.get_int("steps"),
      cfg.get_int("batch_size"), train_len, cfg.get_int("eval_chars")));

  // Independent variants: each draws from its own generators (init and batches from the seed).
  const std::vector<VariantRun> runs = kit::side_by_side(variants.size(), [&](size_t i) {
    return train_and_measure(cfg, ctx, variants[i], corpus, ctx.seed());
  });

  // ---- tables, results, figure ----
  std::vector<std::string> header{"variant"};
  for (int64_t len : lengths) header.push_back(std::to_string(len));
  header.push_back(fmt::format("far mass at {}", lengths.back()));
  Table t("Next-character accuracy by evaluation length", header);
  nlohmann::ordered_json js = nlohmann::ordered_json::array();
  CsvWriter log = ctx.csv("accuracy", {"variant", "length", "accuracy", "loss", "far_mass"});
  LinePlot p =
      kit::line_plot(fmt::format("Trained on {} characters: accuracy at longer lengths", train_len),
                     "evaluation length (characters)", "next-character accuracy", kit::Axes::kLogX);
  p.refs.push_back({RefLine::kVertical, static_cast<double>(train_len), "training length"});
  for (size_t vi = 0; vi < runs.size(); ++vi) {
    const VariantRun& r = runs[vi];
    std::vector<std::string> row{variant_title(r.name, cfg)};
    Series s{variant_title(r.name, cfg), {}, {}, "", r.name == "window", true};
    nlohmann::ordered_json pts = nlohmann::ordered_json::array();
    for (size_t i = 0; i < lengths.size(); ++i) {
      row.push_back(fixed(r.accuracy[i], 3));
      s.x.push_back(static_cast<double>(lengths[i])), s.y.push_back(r.accuracy[i]);
      log.row({static_cast<double>(vi), static_cast<double>(lengths[i]), r.accuracy[i], r.loss[i],
               r.far_mass[i]});
      pts.push_back({{"length", lengths[i]},
                     {"accuracy", r.accuracy[i]},
                     {"loss", r.loss[i]},
                     {"far_mass", r.far_mass[i]},
                     {"scored", r.scored[i]}});
    }
    row.push_back(fixed(r.far_mass.back(), 3));
    t.add_row(row);
    p.series.push_back(s);
    js.push_back({{"variant", r.name}, {"seconds", r.seconds}, {"points", pts}});
  }
  ctx.table(t);
  ctx.result("variants", js);
  ctx.note(fmt::format(
      "Far mass: the mean attention weight (every layer and head, queries at positions >= {}) on "
      "keys {} or more positions back, a distance no training window contained. The CSV lists "
      "the variants in the order {}.",
      train_len, train_len, fmt::join(variants, ", ")));
  ctx.figure("accuracy_vs_length", line_plot_svg(p),
             fmt::format("Learned positions past {} repeat the last trained vector (the table "
                         "has no more); the dashed line is the sliding window.",
                         train_len));

  compare_with_documents(cfg, ctx, runs, bigram_accuracy(corpus, cfg.get_int("eval_chars")));
}

}  // namespace

Experiment length_extrapolation() {
  Experiment e;
  e.name = "length-extrapolation";
  e.source = "000 §VIII, 001 (positional encoding, ALiBi), 004 §4.1 (length extrapolation)";
  e.purpose = "Train a char LM on 32 characters, read 32-512: which positions extrapolate?";
  e.config
      .add_string("variants", fmt::format("{}", fmt::join(kVariants, ",")),
                  "comma-separated: positional schemes (none learned sinusoidal rope alibi "
                  "t5_bias) and 'window' (rope + sliding window)")
      .add_ints("eval_lengths", {32, 64, 128, 256, 512},
                "evaluation lengths, ascending, the first = --train_len", {.min = 1})
      .add_int("train_len", 32, "characters per training window", {.min = 2})
      .add_int("window", 16, "keys before each query the sliding window keeps", {.min = 1})
      .add_int("sentences", 4000, "toy-grammar sentences (10% held out)", {.min = 10})
      .add_int("eval_chars", 8192, "held-out characters scored at every length", {.min = 1})
      .add_int("eval_tokens", 4096, "characters per evaluation batch", {.min = 1})
      .add_real("hold", 0.05, "largest accuracy drop that still counts as extrapolating",
                {.min = 0, .max = 1})
      .add_int("seed", 1, "random seed (weights, batches)", {.min = 0});
  add_model_fields(e.config, {.d_model = 64, .nhead = 4, .num_layers = 2, .dim_ff = 256});
  add_optimizer_fields(e.config, {.steps = 600,
                                  .batch_size = 32,
                                  .lr = 3e-3,
                                  .schedule = "cosine",
                                  .warmup = 50,
                                  .clip = 1.0});
  e.quick = {{"steps", "150"},
             {"warmup", "20"},
             {"eval_lengths", "32,128"},
             {"eval_chars", "2048"},
             {"sentences", "1000"}};
  e.check = [](const Config& c) {
    require_divides(c, "nhead", "d_model");
    if ((c.get_int("d_model") / c.get_int("nhead")) % 2)
      throw UsageError("length-extrapolation: rope needs an even d_model / nhead");
    if (c.get_int("steps") <= c.get_int("warmup"))
      throw UsageError(fmt::format("length-extrapolation: --steps ({}) must exceed --warmup ({})",
                                   c.get_int("steps"), c.get_int("warmup")));
    const std::vector<int64_t> l = c.get_ints("eval_lengths");
    if (l.front() != c.get_int("train_len") || !std::is_sorted(l.begin(), l.end()))
      throw UsageError(fmt::format(
          "length-extrapolation: --eval_lengths must ascend from --train_len ({}), got {}",
          c.get_int("train_len"), fmt::join(l, ",")));
    parse_variants(c.get_string("variants"));
    // The held-out text must hold one window of the longest length.
    const auto val_chars = static_cast<int64_t>(0.1 * 40 * c.get_int("sentences"));
    if (val_chars < 2 * l.back())
      throw UsageError(
          fmt::format("length-extrapolation: --sentences {} gives about {} held-out "
                      "characters, too few for --eval_lengths up to {}",
                      c.get_int("sentences"), val_chars, l.back()));
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
