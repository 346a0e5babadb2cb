// mha-heads [002 §39.7]: a 4-head multi-head attention (d_model 32) over the characters of the
// same sentence, one heatmap per head.
//
//   attnlab run mha-heads
//   attnlab run mha-heads --nhead 8 --columns 4
//
// The embeddings are attention-heatmap's (seed 2); the heads come from nn::MultiheadAttention
// (bias-free projections, PyTorch's initialisation) drawn from --seed. Each head has its own
// W_Q, W_K, W_V slice, so even untrained they look different; we measure how different (mean
// |A_h - A_g| between heads) next to how far each is from uniform.
// Step through: break attn::nn::MultiheadAttention::forward.
#include "experiments/common/head_roles.h"
#include "experiments/common/sentence_attention.h"
#include "experiments/kit/kit.h"
#include "nn/attention/multihead_attention.h"

namespace attn::experiments {

namespace {

void run(const Config& cfg, RunContext& ctx) {
  const int64_t d_model = cfg.get_int("d_model"), heads = cfg.get_int("nhead");
  Generator embed_gen(static_cast<uint64_t>(cfg.get_int("embed_seed")));
  EmbeddedSentence s = embed_characters(cfg.get_string("sentence"), d_model, embed_gen);
  Generator gen(ctx.seed());
  nn::MultiheadAttentionOptions opt;
  opt.bias = false;
  nn::MultiheadAttention mha(d_model, heads, gen, opt);
  mha.eval();
  nn::AttentionOutput a;
  {
    NoGrad off;
    a = mha.forward(s.x, s.x, s.x);
  }
  const int64_t t = static_cast<int64_t>(s.tokens.size());
  const std::string out_shape = shape_str(a.out.shape()), w_shape = shape_str(a.weights.shape());
  ctx.section("Shapes");
  ctx.preformatted(fmt::format(
      "MHA output          {}  (1, T, d_model)\nper-head attention  {}  (1, heads, T, T)",
      out_shape, w_shape));
  ctx.result("output_shape", a.out.shape());
  ctx.result("weights_shape", a.weights.shape());

  ctx.section("Each head");
  const Tensor& w = a.weights.value();
  std::vector<Tensor> per_head;
  for (int64_t h = 0; h < heads; ++h) per_head.push_back(head_map(w, 0, h));  // (T,T)
  Table tab("How each head spreads its attention, and how different the heads are",
            {"head", "entropy / log T", "mean row max", "mean |A_h - A_g| to other heads"});
  std::vector<double> entropy, distinct;
  for (int64_t h = 0; h < heads; ++h) {
    const AttentionSpread sp = attention_spread(per_head[h]);
    double diff = 0;
    for (int64_t g = 0; g < heads; ++g)
      if (g != h)
        for (int64_t i = 0; i < t * t; ++i) diff += std::fabs(per_head[h][i] - per_head[g][i]);
    diff /= static_cast<double>((heads - 1) * t * t);
    entropy.push_back(sp.mean_entropy_ratio);
    distinct.push_back(diff);
    tab.add_row({std::to_string(h + 1), fixed(sp.mean_entropy_ratio, 3), fixed(sp.mean_row_max, 3),
                 fixed(diff, 4)});
  }
  ctx.table(tab);
  ctx.result("entropy_ratio_per_head", entropy);
  ctx.result("mean_abs_difference_per_head", distinct);
  ctx.note(fmt::format(
      "A typical weight is 1/T = {:.3f}; heads differ from each other by {:.4f} per entry on "
      "average, so their maps are visibly different though all close to uniform.",
      1.0 / static_cast<double>(t), heads > 1 ? distinct[0] : 0.0));

  DocumentComparison cmp("002 §39.7 vs ours");
  cmp.add_exact("MHA output shape", "(1,22,32)", out_shape);
  cmp.add_exact("per-head attention shape", "(1,4,22,22)", w_shape);
  cmp.add_exact("each head looks different at random initialisation", "yes",
                kit::yes_no(kit::min_of(distinct) > 1e-4));
  ctx.compare(cmp);

  std::vector<Heatmap> panels;
  const auto labels = display_tokens(s.tokens);
  for (int64_t h = 0; h < heads; ++h) {
    Heatmap hm = attention_heatmap(per_head[h], labels, labels, fmt::format("Head {}", h + 1));
    hm.cell = 12;
    panels.push_back(hm);
  }
  ctx.figure("heads",
             heatmap_grid_svg(panels, static_cast<int>(cfg.get_int("columns")),
                              fmt::format("{} random heads on \"{}\" (untrained)", heads,
                                          cfg.get_string("sentence"))),
             "One heatmap per head, one colour scale for all");
}

}  // namespace

Experiment mha_heads() {
  Experiment e;
  e.name = "mha-heads";
  e.source = "002 §39.7";
  e.purpose = "4-head attention on the same sentence: one heatmap per head";
  e.config.add_string("sentence", "the cat sat on the mat", "text whose characters are the tokens")
      .add_int("columns", 4, "heatmaps per row of the figure", {.min = 1})
      .add_int("embed_seed", 2, "seed of the character embeddings (attention-heatmap's)",
               {.min = 0});
  add_model_fields(e.config, {.d_model = 32, .nhead = 4});  // d_model is split across the heads
  add_seed_field(e.config, 3, "seed of the attention weights (the document uses 3)");
  e.reference = true;  // its point is the computation: the elementary ops on the tape
  e.check = [](const Config& c) { check_model(c); };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
