// attention-matrix [001 "direct connections", 002 §39.5]: the six-by-six attention table that
// 001 prints for "The cat sat on the mat", row by row, beside the same sentence's matrices from
// an untrained attention layer and from a small language model trained on the built-in corpus.
//
//   attnlab run attention-matrix                  # one character GPT, ~30 s on 2 cores
//   attnlab run attention-matrix --steps 1500 --num_layers 3
//
// 001's table gives each word's attention to the six words in percent: a row of attention
// weights is a softmax, so each row must sum to 100 (to the rounding of six printed numbers).
// Our models read characters (the built-in corpus is character text), so a character matrix
// (T,T) is read as a word matrix: word w owns its characters and the space after it, and
//   W[i][j] = mean over the characters q of word i of  sum over the characters k of word j  A[q][k]
// which keeps every row a distribution. The untrained layer is 002 §39.5's single head
// (experiments/common/sentence_attention.h: character embeddings, d_k = d_model / nhead); the
// trained model is the train command's GPT on task charlm (causal: a word sees only itself and
// earlier words, unlike 001's table). 002 §39.5 expects training to make characters attend to
// related ones, "the second the to the first": its row asks whether some trained head gives the
// second "the" more weight on the first "the" than on "cat" or "sat" (nearer, equally long).
// cat-sat-mat is another example (000 §III's three tokens by hand) and is left as it is.
#include "experiments/common/sentence_attention.h"
#include "experiments/common/trained_run.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/trained_model_report.h"
#include "nn/transformer/decoder_only.h"

namespace attn::experiments {

namespace {

const std::string kSentence = "the cat sat on the mat";
const std::vector<std::string> kWords{"The", "cat", "sat", "on", "the", "mat"};
// 001's table in percent: row = the attending word, column = the word attended to.
const std::vector<std::vector<double>> kDocPercent{
    {40, 12, 12, 12, 12, 12}, {15, 35, 25, 5, 5, 15},   {5, 40, 30, 10, 5, 10},
    {12, 12, 12, 40, 12, 12}, {12, 12, 12, 12, 40, 12}, {10, 20, 15, 20, 15, 20}};
// 001's bar list "attention from cat", printed above the table.
const std::vector<double> kDocCatBars{15, 35, 25, 5, 5, 15};
// Six numbers each rounded to a whole percent sum to 100 within 6 x 0.5.
constexpr double kRoundingTolerance = 3.0;

// The characters [begin, end) of each word, its trailing space included.
struct Span {
  int64_t begin, end;
};
std::vector<Span> word_spans(const std::string& s) {
  std::vector<Span> spans;
  int64_t begin = 0;
  for (int64_t i = 0; i <= static_cast<int64_t>(s.size()); ++i)
    if (i == static_cast<int64_t>(s.size()) || s[static_cast<size_t>(i)] == ' ') {
      spans.push_back({begin, std::min(i + 1, static_cast<int64_t>(s.size()))});
      begin = i + 1;
    }
  return spans;
}

// (1,H,T,T) or (1,T,T) -> (T,T): head h, or the mean over the heads when h < 0.
Tensor head_matrix(const Tensor& w, int64_t h = -1) {
  const int64_t t = w.size(-1), heads = w.numel() / (t * t);
  Tensor m = Tensor::zeros({t, t});
  for (int64_t k = 0; k < heads; ++k)
    if (h < 0 || h == k)
      for (int64_t i = 0; i < t * t; ++i)
        m[i] += w[k * t * t + i] / static_cast<real>(h < 0 ? heads : 1);
  return m;
}

// Mean over the characters of span q of the weight summed over the characters of span k.
double span_mass(const Tensor& m, Span q, Span k) {
  const int64_t t = m.size(1);
  double total = 0;
  for (int64_t i = q.begin; i < q.end; ++i)
    for (int64_t j = k.begin; j < k.end; ++j) total += m[i * t + j];
  return total / static_cast<double>(q.end - q.begin);
}

Tensor word_matrix(const Tensor& chars, const std::vector<Span>& spans) {
  const auto n = static_cast<int64_t>(spans.size());
  Tensor w({n, n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      w[i * n + j] = static_cast<real>(
          span_mass(chars, spans[static_cast<size_t>(i)], spans[static_cast<size_t>(j)]));
  return w;
}

// From the second "the" (its letters, spaces left out), in one head's character matrix (T,T):
// the weight on the first "the", the larger of the weights on "cat" and "sat" (nearer, as long),
// and what a head blind to content would give the first "the": uniform weights over the keys
// each query sees (all T, or the first q + 1 when causal). "Looks at the first the" = more than
// both.
struct TheLookup {
  std::string head;
  double on_the = 0, on_other = 0, uniform = 0;
  double margin() const { return on_the - std::max(on_other, uniform); }
};
TheLookup the_lookup(const Tensor& chars,
                     const std::vector<Span>& spans,
                     bool causal,
                     std::string head) {
  auto letters = [&](size_t w) { return Span{spans[w].begin, spans[w].end - 1}; };
  const Span from = letters(4), to = letters(0);
  double uniform = 0;
  for (int64_t q = from.begin; q < from.end; ++q)
    uniform += static_cast<double>(to.end - to.begin) /
               static_cast<double>((causal ? q + 1 : chars.size(1)) * (from.end - from.begin));
  return {std::move(head), span_mass(chars, from, to),
          std::max(span_mass(chars, from, letters(1)), span_mass(chars, from, letters(2))),
          uniform};
}

train::TrainConfig lm_config(const Config& cfg, uint64_t seed) {
  const auto m = read_model(cfg);
  const auto o = read_optimizer(cfg);
  train::TrainConfig t;
  t.task = "charlm";
  t.model = "gpt";
  t.seed = seed;
  t.d_model = m.d_model, t.nhead = m.nhead, t.num_layers = m.num_layers, t.dim_ff = m.dim_ff;
  t.steps = o.steps, t.batch_size = o.batch_size, t.lr = o.lr, t.warmup = o.warmup;
  t.block_len = read_data(cfg).block_len;
  t.eval_size = read_eval(cfg).eval_size;
  t.eval_every = t.steps;  // one evaluation, at the end
  t.target = 0;
  t.checkpoint_every = 0;
  t.progress = "lines";
  return t;
}

// 001's table as fractions (6,6).
Tensor document_matrix() {
  Tensor doc({6, 6});
  for (int64_t i = 0; i < 36; ++i) doc[i] = static_cast<real>(kDocPercent[i / 6][i % 6] / 100);
  return doc;
}

void compare_document_rows(const Tensor& untrained_words, RunContext& ctx) {
  ctx.section("001's table, row by row");
  DocumentComparison cmp(
      "001 (direct connections): each row of the six-by-six table a distribution");
  for (size_t i = 0; i < kDocPercent.size(); ++i) {
    const double sum = std::accumulate(kDocPercent[i].begin(), kDocPercent[i].end(), 0.0);
    cmp.add(fmt::format("row {} ({}): sum of the percentages", i, kWords[i]), 100.0, sum,
            kRoundingTolerance, fmt::format("the row sums to {}%, not a distribution", sum))
        .exact_quantity();
  }
  cmp.add_exact("the bars from \"cat\" are the table's \"cat\" row", "yes",
                kit::yes_no(kDocCatBars == kDocPercent[1]));
  ctx.compare(cmp);
  ctx.matrix("001's table (fractions)", document_matrix(), kWords, kWords);
  ctx.matrix("untrained layer, words", untrained_words, kWords, kWords);
}

Heatmap word_panel(const Tensor& w, const std::string& title) {
  Heatmap h = attention_heatmap(w, kWords, kWords, title);
  h.annotate = true;
  h.vmin = 0;
  h.vmax = 1;
  return h;
}

// 002 §39.5's "the second the looks at the first": the untrained head and the trained head that
// does it most, against a content-blind head and the nearer words.
void compare_the_lookup(const TheLookup& before,
                        const TheLookup& best,
                        bool trained,
                        RunContext& ctx) {
  Table t(
      "From the second \"the\": weight on the first \"the\", on the nearer \"cat\"/\"sat\", "
      "and uniform weights' share of the first \"the\"",
      {"head", "on the first \"the\"", "on \"cat\" or \"sat\" (larger)", "uniform"});
  for (const TheLookup* x : {&before, &best})
    t.add_row({x->head, fixed(x->on_the), fixed(x->on_other), fixed(x->uniform)});
  ctx.table(t);
  kit::record(ctx, {{"untrained_the_on_the", before.on_the},
                    {"untrained_the_on_other", before.on_other},
                    {"trained_best_head", best.head},
                    {"trained_best_the_on_the", best.on_the},
                    {"trained_best_the_on_other", best.on_other},
                    {"trained_the_uniform", best.uniform}});
  DocumentComparison cmp("002 §39.5: after training, the second \"the\" looks at the first");
  cmp.add_exact(
         "a trained head weighs the first \"the\" above \"cat\", \"sat\" and uniform attention",
         "yes", kit::yes_no(best.margin() > 0),
         fmt::format("the best head ({}) puts {:.3f} on the first \"the\", {:.3f} on cat/sat, "
                     "{:.3f} if uniform: this model attends mostly to the nearest characters",
                     best.head, best.on_the, best.on_other, best.uniform))
      .not_judged_if(!trained, "the model predicts no better than character frequencies");
  ctx.compare(cmp);
}

// The trained model's attention on the sentence, per layer (1,H,T,T).
std::vector<Tensor> trained_weights(TrainedRun& r) {
  const data::Tokenizer& tok = r.setup.heldout->tokenizer();
  const std::vector<int64_t> ids = tok.encode(kSentence);
  Tensor x({1, static_cast<int64_t>(ids.size())});
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == data::kUnk)
      throw Error(fmt::format("attention-matrix: the corpus has no character '{}' of \"{}\"",
                              kSentence[i], kSentence));
    x[static_cast<int64_t>(i)] = static_cast<real>(ids[i]);
  }
  auto& gpt = dynamic_cast<nn::DecoderOnlyTransformer&>(r.summary.model->module());
  NoGrad off;
  gpt.eval();
  gpt.forward(x);
  std::vector<Tensor> layers;
  for (const auto& layer : *gpt.layers) layers.push_back(layer->self_attn->last_weights());
  return layers;
}

void run(const Config& cfg, RunContext& ctx) {
  const std::vector<Span> spans = word_spans(kSentence);
  const auto m = read_model(cfg);
  Generator gen(ctx.seed());
  const EmbeddedSentence s = embed_characters(kSentence, m.d_model, gen);
  const Tensor untrained = head_matrix(single_head(s.x, m.d_model / m.nhead, gen).weights);
  const Tensor untrained_words = word_matrix(untrained, spans);
  compare_document_rows(untrained_words, ctx);

  ctx.section("A character GPT trained on the built-in corpus");
  TrainedRun r = train_for_experiment(lm_config(cfg, ctx.seed()), ctx, "train");
  const double ppl = r.summary.final_eval.at("perplexity");
  const double unigram = std::exp(kit::unigram(r.setup.heldout_set).entropy);
  ctx.note(fmt::format("{}: held-out perplexity {:.3f} (character frequencies alone: {:.3f}).",
                       r.summary.model_description, ppl, unigram));
  kit::record(ctx, {{"perplexity", ppl}, {"unigram_perplexity", unigram}});

  const std::vector<std::string> chars = display_tokens(s.tokens);
  std::vector<Heatmap> words{word_panel(untrained_words, "untrained")};
  std::vector<Heatmap> char_panels{attention_heatmap(untrained, chars, chars, "untrained")};
  TheLookup best;  // replaced by the first trained head
  const std::vector<Tensor> layers = trained_weights(r);
  for (size_t l = 0; l < layers.size(); ++l) {
    const Tensor mean = head_matrix(layers[l]);
    const Tensor w = word_matrix(mean, spans);
    ctx.matrix(fmt::format("trained layer {} (heads averaged), words", l + 1), w, kWords, kWords);
    words.push_back(word_panel(w, fmt::format("trained layer {}", l + 1)));
    char_panels.push_back(attention_heatmap(mean, chars, chars, fmt::format("layer {}", l + 1)));
    for (int64_t h = 0; h < layers[l].size(1); ++h) {
      TheLookup t = the_lookup(head_matrix(layers[l], h), spans, true,
                               fmt::format("layer {} head {}", l + 1, h + 1));
      if (best.head.empty() || t.margin() > best.margin()) best = t;
    }
  }
  words.insert(words.begin(), word_panel(document_matrix(), "001's table"));
  ctx.figure("word_matrices", heatmap_grid_svg(words, 2, "\"The cat sat on the mat\" by words"),
             "001's table beside an untrained layer and the trained GPT's layers (heads averaged)");
  ctx.figure("character_matrices",
             heatmap_grid_svg(char_panels, 2, "The same sentence by characters"),
             "Untrained single head (bidirectional) and the trained GPT's layers (causal)");

  compare_the_lookup(the_lookup(untrained, spans, false, "untrained head"), best, ppl < unigram,
                     ctx);
}

}  // namespace

Experiment attention_matrix() {
  Experiment e;
  e.name = "attention-matrix";
  e.source = "001 (direct connections), 002 §39.5";
  e.purpose = "001's six-by-six table checked row by row, beside untrained and trained matrices";
  add_model_fields(e.config, {.d_model = 64, .nhead = 4, .num_layers = 2, .dim_ff = 256});
  add_optimizer_fields(e.config, {.steps = 600, .batch_size = 32, .lr = 3e-3, .warmup = 50});
  add_data_fields(e.config, {.block_len = 64});
  add_eval_fields(e.config, {.eval_size = 200});
  e.quick = {{"steps", "40"}, {"warmup", "10"}, {"eval_size", "50"}};
  e.check = [](const Config& c) {
    check_model(c);
    check_optimizer(c);
    if (c.get_int("warmup") >= c.get_int("steps"))  // the cosine schedule needs steps after it
      throw UsageError(fmt::format("--steps {} must exceed --warmup {}", c.get_int("steps"),
                                   c.get_int("warmup")));
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
