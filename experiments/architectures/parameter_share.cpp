// parameter-share [004 §1.3, 001]: where a transformer's weights are. Document 004 says the
// Q, K, V matrices hold over half of a large model's weights; 001 says the feed-forward network
// often holds more than attention. Both are counting questions, so we count: every model below
// is constructed and its parameters() summed by component, and each count is checked against
// the closed form (experiments/common/parameter_census.h).
//
//   attnlab run parameter-share
//   attnlab run parameter-share --d_model 1024 --dim_ff 4096 --nhead 16 --vocab 50000
//
// For the standard block (4 projections of d^2, an FFN of 2 d d_ff with d_ff = 4d):
//   QKV share = 3 d^2 / (4 d^2 + 8 d^2) = 1/4 (plus biases and norms, which hardly move it).
// Grouped-query attention shrinks K and V further; a SwiGLU FFN keeps the FFN at ~8 d^2.
#include "experiments/common/pair_memory_model.h"
#include "experiments/common/parameter_census.h"
#include "experiments/common/trained_run.h"
#include "experiments/kit/kit.h"
#include "experiments/registry.h"
#include "nn/transformer/decoder_layer.h"
#include "nn/transformer/encoder_layer.h"
#include "nn/transformer/llama_block.h"
#include "nn/transformer/seq2seq.h"
#include "train/run/task_model.h"
#include "train/run/task_setup.h"

namespace attn::experiments {

namespace {

// Published sizes of two large models (GPT-3 paper, Table 2.1; Meta's Llama 3 8B params.json).
constexpr StandardBlockSize kGpt3{12288, 4 * 12288, true};
constexpr LlamaBlockSize kLlama3_8b{4096, 32, 8, 14336};

// One row of the census: a model, its counts as constructed and as the formula gives them.
struct Row {
  std::string key;    // results.json name
  std::string label;  // the table
  std::string tag;    // the figure's bar
  ComponentCounts counts;
  ComponentCounts formula;
  bool constructed = true;  // false: too large to build here, the closed form only

  double share(Component c) const {
    return static_cast<double>(counts[c]) / static_cast<double>(counts.total());
  }
  double qkv_share() const {
    return static_cast<double>(counts.qkv()) / static_cast<double>(counts.total());
  }
  double ffn_over_attention() const {
    return static_cast<double>(counts[Component::kFFN]) / static_cast<double>(counts.attention());
  }
};

Row built(std::string key,
          std::string label,
          std::string tag,
          const nn::Module& m,
          ComponentCounts formula) {
  Row r{std::move(key), std::move(label), std::move(tag), count_by_component(m), formula};
  if (r.counts.total() != m.num_parameters())
    throw Error(fmt::format("parameter-share: the census of {} sums to {}, parameters() to {}",
                            r.label, r.counts.total(), m.num_parameters()));
  return r;
}

Row closed_form_only(std::string key, std::string label, std::string tag, ComponentCounts formula) {
  return {std::move(key), std::move(label), std::move(tag), formula, formula, false};
}

nn::TransformerLayerOptions standard_options(const Config& cfg) {
  nn::TransformerLayerOptions o;
  o.d_model = cfg.get_int("d_model");
  o.nhead = cfg.get_int("nhead");
  o.dim_feedforward = cfg.get_int("dim_ff");
  o.dropout = 0;
  return o;
}

// The reversal experiment's model at that experiment's defaults, built the way `attnlab run
// reversal` builds it (reversal_train_config, train/run/task_model.h), so the row follows any
// change there.
Row reversal_row(Generator& gen) {
  train::TrainConfig t = reversal_train_config(find_experiment("reversal").config, 0);
  t.eval_size = 1;
  const train::TaskSetup setup = train::make_task_setup(t);
  const train::SequenceLimits limits{setup.train->max_src_len(), setup.train->max_tgt_len()};
  const auto model = train::make_task_model(t, *setup.train, limits, gen);
  const int64_t vocab = setup.train->tokenizer().vocab_size();
  Seq2SeqSize s{{t.d_model, t.dim_ff, true}, t.num_layers, t.num_layers, vocab, vocab, false};
  return built("reversal_model",
               fmt::format("reversal toy model (d {}, ff {}, {}+{} layers, vocab {})", t.d_model,
                           t.dim_ff, t.num_layers, t.num_layers, vocab),
               "reversal toy", model->module(), seq2seq_formula(s));
}

// The model scaling-variance trains (experiments/common/pair_memory_model.h) at that
// experiment's defaults: two embedding tables, one attention, a linear head.
Row recall_row(Generator& gen) {
  const Config& sc = find_experiment("scaling-variance").config;
  const int64_t d = sc.get_int("train_dk");
  const data::RecallTask task({.num_pairs = sc.get_int("recall_pairs")});
  const int64_t vocab = task.tokenizer().vocab_size();
  PairMemoryModel model(vocab, d, true, gen);
  ComponentCounts f;
  f[Component::kQ] = f[Component::kK] = f[Component::kV] = f[Component::kO] = d * d + d;
  f[Component::kEmbeddings] = 2 * vocab * d;
  f[Component::kHead] = d * vocab + vocab;
  return built("recall_model",
               fmt::format("recall toy model (d_k {}, one head, vocab {})", d, vocab), "recall toy",
               model, f);
}

std::vector<Row> census(const Config& cfg, Generator& gen) {
  const nn::TransformerLayerOptions o = standard_options(cfg);
  const StandardBlockSize size{o.d_model, o.dim_feedforward, true};
  std::vector<Row> rows;
  {
    nn::TransformerEncoderLayer enc(o, gen);
    rows.push_back(built("encoder_layer",
                         fmt::format("encoder layer (d {}, ff {})", o.d_model, o.dim_feedforward),
                         "encoder layer", enc, encoder_layer_formula(size)));
    nn::TransformerDecoderLayer dec(o, gen);
    rows.push_back(built("decoder_layer",
                         fmt::format("decoder layer (d {}, ff {})", o.d_model, o.dim_feedforward),
                         "decoder layer", dec, decoder_layer_formula(size)));
  }
  std::vector<int64_t> kv_choices{o.nhead};  // full multi-head, then grouped-query if asked
  const int64_t kv_heads = cfg.get_int("n_kv_heads") == 0 ? o.nhead : cfg.get_int("n_kv_heads");
  if (kv_heads != o.nhead) kv_choices.push_back(kv_heads);
  for (const int64_t kv : kv_choices) {
    nn::LlamaConfig lc;
    lc.dim = o.d_model;
    lc.n_heads = o.nhead;
    lc.n_kv_heads = kv;
    nn::LlamaBlock block(lc, gen);
    const int64_t hidden = block.config().hidden_dim;
    rows.push_back(built(kv == o.nhead ? "llama_block_mha" : "llama_block_gqa",
                         fmt::format("llama-style block (d {}, SwiGLU {}, {} kv heads of {})",
                                     o.d_model, hidden, kv, o.nhead),
                         fmt::format("llama {}/{} kv", kv, o.nhead), block,
                         llama_block_formula({o.d_model, o.nhead, kv, hidden})));
  }
  {
    nn::Seq2SeqOptions so;
    static_cast<nn::TransformerLayerOptions&>(so) = o;
    so.num_encoder_layers = so.num_decoder_layers = cfg.get_int("num_layers");
    so.src_vocab = so.tgt_vocab = cfg.get_int("vocab");
    so.tie_output = true;
    so.max_len = 8;  // the sinusoids are a buffer: no parameters either way
    nn::Seq2SeqTransformer whole(so, gen);
    Seq2SeqSize s{size,         so.num_encoder_layers, so.num_decoder_layers,
                  so.src_vocab, so.tgt_vocab,          true};
    rows.push_back(built("base_model",
                         fmt::format("whole encoder-decoder ({}+{} layers, vocab {}, tied output)",
                                     s.encoder_layers, s.decoder_layers, so.src_vocab),
                         "whole model", whole, seq2seq_formula(s)));
  }
  rows.push_back(reversal_row(gen));
  rows.push_back(recall_row(gen));
  // Large models' blocks, from their published sizes: the closed form (checked above on the
  // same code paths at small sizes) without allocating gigabytes.
  rows.push_back(closed_form_only(
      "gpt3_block",
      fmt::format("GPT-3 175B block (d {}, ff {}), formula", kGpt3.d_model, kGpt3.d_ff),
      "GPT-3 block*", encoder_layer_formula(kGpt3)));
  rows.push_back(closed_form_only(
      "llama3_8b_block",
      fmt::format("Llama 3 8B block (d {}, SwiGLU {}, {} kv of {}), formula", kLlama3_8b.dim,
                  kLlama3_8b.hidden, kLlama3_8b.n_kv_heads, kLlama3_8b.n_heads),
      "Llama 3 8B*", llama_block_formula(kLlama3_8b)));
  return rows;
}

// Before the run folder exists: the heads split d_model, the kv heads split the heads, and a
// head has an even width (RoPE in the llama-style block rotates pairs).
void check(const Config& cfg) {
  check_model(cfg);
  if ((cfg.get_int("d_model") / cfg.get_int("nhead")) % 2 != 0)
    throw UsageError(fmt::format(
        "parameter-share: heads of --d_model {} / --nhead {} = {} dimensions; the llama-style "
        "block needs an even width (RoPE rotates pairs)",
        cfg.get_int("d_model"), cfg.get_int("nhead"),
        cfg.get_int("d_model") / cfg.get_int("nhead")));
}

// The documents' claims: QKV holds most of the weights, the FFN more than attention.
void compare_with_documents(const std::vector<Row>& rows, RunContext& ctx) {
  DocumentComparison cmp("004 §1.3 and 001 vs the counts");
  for (const Row& r : rows) {
    if (r.key == "reversal_model" || r.key == "recall_model") continue;  // toys, not LLMs
    const bool over_half = r.qkv_share() > 0.5;
    cmp.add_exact(
        "QKV holds over half the weights: " + r.label, "yes", kit::yes_no(over_half),
        over_half
            ? ""
            : fmt::format("Q, K and V are {:.1f}% of this model's {} parameters (FFN {:.1f}%)",
                          100 * r.qkv_share(), r.counts.total(), 100 * r.share(Component::kFFN)));
  }
  for (const Row& r : rows) {
    if (r.key == "base_model" || r.key == "reversal_model" || r.key == "recall_model") continue;
    const bool more = r.counts[Component::kFFN] > r.counts.attention();
    cmp.add_exact(
        "FFN holds more than attention (Q,K,V,O): " + r.label, "yes", kit::yes_no(more),
        fmt::format(
            "FFN / attention = {:.2f}{}", r.ffn_over_attention(),
            r.key == "decoder_layer" ? ": cross-attention brings a second set of Q, K, V, O" : ""));
  }
  ctx.compare(cmp);
}

// Splitting d_model over heads: 004 §2.2 (8 heads of a 512-wide model are 512 / 8 wide) and 002
// §39.7 (eight heads of 8 cost what one head of 64 costs: the projections are d x d whatever h
// is, only reshaped). Both read constructed nn::MultiheadAttention modules.
void compare_head_split(const Config& cfg, Generator& gen, RunContext& ctx) {
  const int64_t d = cfg.get_int("d_model"), h = cfg.get_int("nhead");
  const nn::MultiheadAttention split(d, h, gen), one_of_64(64, 1, gen), eight_of_8(64, 8, gen);
  ctx.section("Splitting the width over heads");
  Table t("nn::MultiheadAttention as constructed", {"model", "heads", "head width", "parameters"});
  for (const auto* m : {&split, &one_of_64, &eight_of_8})
    t.add_row({fmt::format("d_model {}", m->embed_dim()), std::to_string(m->num_heads()),
               std::to_string(m->head_dim()), std::to_string(m->num_parameters())});
  ctx.table(t);
  kit::record(ctx, {{"head_width", split.head_dim()},
                    {"parameters_one_head_of_64", one_of_64.num_parameters()},
                    {"parameters_eight_heads_of_8", eight_of_8.num_parameters()}});
  DocumentComparison cmp("004 §2.2 and 002 §39.7 vs constructed modules");
  cmp.add("004 §2.2: head width of 8 heads in a 512-wide model", 64,
          static_cast<double>(split.head_dim()), 0,
          fmt::format("built with --d_model {} --nhead {}", d, h), 0)
      .not_judged_if(d != 512 || h != 8, "the document's sizes are --d_model 512 --nhead 8");
  cmp.add("002 §39.7: parameters of 8 heads of 8 (one head of 64: the document's side)",
          static_cast<double>(one_of_64.num_parameters()),
          static_cast<double>(eight_of_8.num_parameters()), 0,
          "the four projections are 64 x 64 (+ bias) in both; the heads only reshape Q, K, V", 0);
  ctx.compare(cmp);
}

// The shares of every row, stacked to 1.
void plot_shares(const std::vector<Row>& rows, RunContext& ctx) {
  BarChart b;
  b.title = "Share of parameters by component";
  b.y_label = "share of the model's parameters";
  b.stacked = true;
  b.y_max = 1;
  b.width = 820;
  for (const Row& r : rows) b.labels.push_back(r.tag);
  for (size_t c = 0; c < kNumComponents; ++c) {
    BarSeries s{component_name(Component(c)), {}, ""};
    bool any = false;
    for (const Row& r : rows) {
      s.values.push_back(r.share(Component(c)));
      any = any || r.counts.n[c] > 0;
    }
    if (any) b.series.push_back(s);
  }
  ctx.figure("parameter_share", bar_chart_svg(b),
             "Where the weights are: Q, K, V (bottom three) against the FFN and the embeddings "
             "(* closed form only)");
}

void run(const Config& cfg, RunContext& ctx) {
  const int64_t d = cfg.get_int("d_model");
  Generator gen(ctx.seed());
  const std::vector<Row> rows = census(cfg, gen);

  ctx.section("Parameters by component");
  std::vector<std::string> header{"model"};
  for (size_t c = 0; c < kNumComponents; ++c) header.push_back(component_name(Component(c)));
  for (const char* h2 : {"total", "QKV share", "FFN / attention", "census = formula"})
    header.push_back(h2);
  Table t("Parameter counts (constructed modules, summed over parameters())", header);
  bool all_match = true;
  for (const Row& r : rows) {
    std::vector<std::string> cells{r.label};
    for (int64_t n : r.counts.n) cells.push_back(std::to_string(n));
    const bool match = r.counts == r.formula;
    all_match = all_match && match;
    cells.insert(cells.end(), {std::to_string(r.counts.total()), fixed(r.qkv_share(), 3),
                               fixed(r.ffn_over_attention(), 2),
                               r.constructed ? (match ? "yes" : "NO") : "formula only"});
    t.add_row(cells);
    if (!match) t.flag_last_row();

    nlohmann::ordered_json j;
    for (size_t c = 0; c < kNumComponents; ++c) j[component_name(Component(c))] = r.counts.n[c];
    j["total"] = r.counts.total();
    j["qkv_share"] = r.qkv_share();
    j["ffn_over_attention"] = r.ffn_over_attention();
    j["constructed"] = r.constructed;
    j["matches_formula"] = match;
    ctx.result(r.key, j);
  }
  ctx.table(t);
  ctx.result("all_match_formula", all_match);
  if (!all_match)
    throw Error(
        "parameter-share: a constructed model's count differs from its closed form (the "
        "table flags the row)");

  auto row = [&](const std::string& key) -> const Row& {
    for (const Row& r : rows)
      if (r.key == key) return r;
    throw Error("parameter-share: no row " + key);
  };
  const Row &enc = row("encoder_layer"), &whole = row("base_model");
  const double dd = static_cast<double>(d), ff = static_cast<double>(cfg.get_int("dim_ff"));
  ctx.note(fmt::format(
      "A standard block has four d x d projections and an FFN of 2 d d_ff weights, so Q, K and V "
      "together are 3 d^2 / (4 d^2 + 2 d d_ff) = {:.3f} of its matrices (d = {}, d_ff = {}); the "
      "constructed encoder layer, biases and norms included, gives {:.4f}. In the whole model "
      "the embedding tables take {:.3f} of all weights and Q, K, V {:.3f}.",
      3 * dd * dd / (4 * dd * dd + 2 * dd * ff), d, cfg.get_int("dim_ff"), enc.qkv_share(),
      whole.share(Component::kEmbeddings), whole.qkv_share()));

  compare_with_documents(rows, ctx);
  compare_head_split(cfg, gen, ctx);
  plot_shares(rows, ctx);
}

}  // namespace

Experiment parameter_share() {
  Experiment e;
  e.name = "parameter-share";
  e.source = "004 §1.3, 001 (feed-forward network)";
  e.purpose =
      "Parameter counts by component (Q, K, V, O, FFN, norms, embeddings): does QKV "
      "hold most of the weights?";
  e.config.add_int("vocab", 37000, "shared vocabulary of the whole model", {.min = 1});
  // The base model's sizes; n_kv_heads is the grouped-query llama-style block's, num_layers the
  // whole model's encoder and decoder layers.
  add_model_fields(e.config,
                   {.d_model = 512, .nhead = 8, .n_kv_heads = 2, .num_layers = 6, .dim_ff = 2048});
  e.quick = {{"vocab", "1000"}, {"num_layers", "2"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
