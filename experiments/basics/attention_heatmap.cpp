// attention-heatmap [002 §39.5]: what an untrained self-attention head looks at, over the
// characters of "the cat sat on the mat".
//
//   attnlab run attention-heatmap
//   attnlab run attention-heatmap --sentence "attention is all you need" --d_k 64
//
// One-hot characters go through an nn::Embedding (d_model 32) and three bias-free projections
// to d_k = 16, then nn::scaled_dot_product_attention. The document says random weights give a
// "reasonably uniform" matrix and credits the 1/sqrt(d_k) scaling; we measure how uniform (row
// entropy relative to log T) with and without the scaling, over many random draws.
// Step through: break attn::nn::scaled_dot_product_attention.
#include "experiments/common/sentence_attention.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

void run(const Config& cfg, RunContext& ctx) {
  const int64_t d_model = cfg.get_int("d_model"), d_k = cfg.get_int("d_k");
  Generator gen(ctx.seed());
  EmbeddedSentence s = embed_characters(cfg.get_string("sentence"), d_model, gen);
  Generator gen_unscaled = gen;  // the same projection weights for the unscaled version
  SingleHead h = single_head(s.x, d_k, gen, true);
  SingleHead raw = single_head(s.x, d_k, gen_unscaled, false);
  const int64_t t = static_cast<int64_t>(s.tokens.size());
  const auto labels = display_tokens(s.tokens);

  ctx.section("Shapes");
  const std::string attn_shape = shape_str(h.weights.shape()), out_shape = shape_str(h.out.shape());
  ctx.preformatted(
      fmt::format("attention {}  (1, T, T)\noutput    {}  (1, T, d_v)", attn_shape, out_shape));
  ctx.result("attention_shape", h.weights.shape());
  ctx.result("output_shape", h.out.shape());
  ctx.result("tokens", s.tokens);
  ctx.result("weights", h.weights.reshape({t, t}));

  ctx.section("How uniform is it?");
  const int64_t trials = cfg.get_int("trials");
  double ent[2] = {0, 0}, rowmax[2] = {0, 0};
  Generator many(ctx.seed() + 1000);
  for (int64_t k = 0; k < trials; ++k) {
    EmbeddedSentence sk = embed_characters(cfg.get_string("sentence"), d_model, many);
    Generator g2 = many;
    const AttentionSpread a = attention_spread(single_head(sk.x, d_k, many, true).weights);
    const AttentionSpread b = attention_spread(single_head(sk.x, d_k, g2, false).weights);
    ent[0] += a.mean_entropy_ratio / trials;
    ent[1] += b.mean_entropy_ratio / trials;
    rowmax[0] += a.mean_row_max / trials;
    rowmax[1] += b.mean_row_max / trials;
  }
  const AttentionSpread shown = attention_spread(h.weights),
                        shown_raw = attention_spread(raw.weights);
  Table t_spread("Spread of the attention rows (entropy / log T: 1 = uniform, 0 = one key)",
                 {"", "entropy / log T", "mean row max", "largest weight", "uniform weight 1/T"});
  t_spread.add_row({"this draw, scaled", fixed(shown.mean_entropy_ratio, 3),
                    fixed(shown.mean_row_max, 3), fixed(shown.max_weight, 3),
                    fixed(1.0 / static_cast<double>(t), 3)});
  t_spread.add_row({"this draw, unscaled", fixed(shown_raw.mean_entropy_ratio, 3),
                    fixed(shown_raw.mean_row_max, 3), fixed(shown_raw.max_weight, 3), ""});
  t_spread.add_row({fmt::format("mean of {} draws, scaled", trials), fixed(ent[0], 3),
                    fixed(rowmax[0], 3), "", ""});
  t_spread.add_row({fmt::format("mean of {} draws, unscaled", trials), fixed(ent[1], 3),
                    fixed(rowmax[1], 3), "", ""});
  ctx.table(t_spread);
  ctx.result("entropy_ratio", shown.mean_entropy_ratio);
  ctx.result("entropy_ratio_unscaled", shown_raw.mean_entropy_ratio);
  ctx.result("mean_entropy_ratio_scaled", ent[0]);
  ctx.result("mean_entropy_ratio_unscaled", ent[1]);
  ctx.result("max_weight", shown.max_weight);
  ctx.note(fmt::format(
      "With the scaling the rows keep {:.0f}% of the maximum entropy on average; without it "
      "{:.0f}%. Random projections of N(0,1) embeddings give scores with variance ~ d_k times "
      "that of one coordinate product; dividing by sqrt(d_k) brings them back to O(1), so the "
      "softmax starts out spread over many keys and every key receives gradient.",
      100 * ent[0], 100 * ent[1]));

  DocumentComparison cmp("002 §39.5 vs ours");
  cmp.add_exact("attention shape", "(1,22,22)", attn_shape);
  cmp.add_exact("output shape", "(1,22,16)", out_shape);
  cmp.add_exact("rows closer to uniform with the scaling than without", "yes",
                ent[0] > ent[1] ? "yes" : "no");
  ctx.compare(cmp);

  Heatmap hm =
      attention_heatmap(h.weights.reshape({t, t}), labels, labels,
                        "Self-attention before training: \"" + cfg.get_string("sentence") + "\"");
  ctx.figure("attention", heatmap_svg(hm), "Untrained single head, scaled by 1/sqrt(d_k)");
  hm.values = raw.weights.reshape({t, t});
  hm.title = "The same weights without 1/sqrt(d_k)";
  ctx.figure("attention_unscaled", heatmap_svg(hm), "Without the scaling the rows are peakier");
}

}  // namespace

Experiment attention_heatmap() {
  Experiment e;
  e.name = "attention-heatmap";
  e.source = "002 §39.5";
  e.purpose = "Untrained self-attention over the characters of a sentence, as a heatmap";
  add_sentence_fields(e.config);
  e.config.add_int("trials", 50, "random draws for the uniformity statistics", {.min = 1});
  e.quick = {{"trials", "10"}};
  e.reference = true;  // its point is the computation: the elementary ops on the tape
  e.run = run;
  return e;
}

}  // namespace attn::experiments
