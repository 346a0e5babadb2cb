// identity-lookup [002 §39.2]: attention as a soft dictionary. Queries equal to the keys
// (Q = K = I_4) should pick out their own value row; with the 1/sqrt(d_k) scaling they only
// lean towards it. Then: does the diagonal sharpen as the dimension grows, as the text says?
//
//   attnlab run identity-lookup
//   attnlab run identity-lookup --dims 4,16,64,256,1024 --trials 50
//
// Three ways to "grow the dimension" (rows of the table and lines of the figure):
//   one-hot, T = d   Q = K = I_d (the document's input at a larger size): self-score 1/sqrt(d)
//   one-hot, T = 4   4 one-hot tokens in d dimensions: self-score 1/sqrt(d), others 0
//   random,  T = 4   4 random N(0,1) vectors in d dimensions: self-score |k|^2/sqrt(d) ~ sqrt(d)
// Only the last sharpens: scaling by 1/sqrt(d) keeps the scores O(1) only when vector entries
// are O(1); unit-length one-hot vectors get *flatter* with d.
#include "experiments/common/attention_steps.h"
#include "experiments/common/self_attention_stats.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// 002 §39.2's printed output for Q = K = I_4, V = arange(16) as (4,4).
const std::vector<std::vector<double>> kDocA{{0.355, 0.215, 0.215, 0.215},
                                             {0.215, 0.355, 0.215, 0.215},
                                             {0.215, 0.215, 0.355, 0.215},
                                             {0.215, 0.215, 0.215, 0.355}};
const std::vector<std::vector<double>> kDocOut{{5.163, 6.163, 7.163, 8.163},
                                               {5.721, 6.721, 7.721, 8.721},
                                               {6.279, 7.279, 8.279, 9.279},
                                               {6.837, 7.837, 8.837, 9.837}};
constexpr double kTol3 = 5e-4 + 1e-5;

// Mean weight on the diagonal of softmax(Q Q^T / sqrt(d)).
double mean_diagonal(const Tensor& q) {
  return self_attention_stats(q, 1 / std::sqrt(static_cast<double>(q.size(1)))).mean_diagonal;
}

// ---- the document's example: Q = K = I_4, V = arange(16) against its printed output ----
void document_example(RunContext& ctx, DocumentComparison& cmp) {
  const int64_t n = 4;
  Var I = Var::constant(one_hot_rows(n, n));
  Tensor v = Tensor::arange(n * n).reshape({n, n});
  AttentionSteps s = attention_steps(I, I, Var::constant(v), 1 / std::sqrt(double(n)));
  const auto keys = index_labels(n, "k"), queries = index_labels(n, "q");
  ctx.section("Q = K = I_4, V = arange(16)");
  ctx.matrix("V", v, index_labels(n, "v"), index_labels(n, "c"));
  ctx.matrix("A", s.weights.value(), queries, keys);
  ctx.matrix("out", s.out.value(), queries, index_labels(n, "c"));
  ctx.note(fmt::format(
      "The self-score is 1/sqrt(4) = 0.5 and every other score 0, so the diagonal weight is "
      "e^0.5 / (e^0.5 + 3) = {:.4f}: each output row leans towards its own value row but mixes in "
      "the mean of the others.",
      std::exp(0.5) / (std::exp(0.5) + 3)));
  cmp.add_rows("A", kDocA, s.weights.value(), kTol3);
  cmp.add_rows("out", kDocOut, s.out.value(), kTol3);

  const Heatmap h = kit::numbered_heatmap(s.weights.value(), queries, keys, "Q = K = I_4", 64);
  ctx.figure("attention_i4", heatmap_svg(h), "One-hot queries meet one-hot keys: a soft diagonal");
}

void run(const Config& cfg, RunContext& ctx) {
  DocumentComparison cmp("002 §39.2: printed output vs ours");
  document_example(ctx, cmp);

  // ---- growing the dimension ----
  ctx.section("Does the diagonal sharpen as the dimension grows?");
  const auto& dims = cfg.get_ints("dims");
  const int64_t trials = cfg.get_int("trials");
  Generator gen(ctx.seed());
  Table t("Mean diagonal weight of softmax(Q K^T / sqrt(d)), Q = K",
          {"d", "one-hot, T = d", "one-hot, T = 4", "random N(0,1), T = 4", "uniform 1/T (T = 4)"});
  std::vector<double> xs, onehot_td, onehot_t4, random_t4;
  for (int64_t d : dims) {
    const double a = mean_diagonal(one_hot_rows(d, d));
    const double b = d >= 4 ? mean_diagonal(one_hot_rows(4, d)) : NAN;
    double c = 0;
    for (int64_t k = 0; k < trials; ++k) c += mean_diagonal(Tensor::randn({4, d}, gen));
    c /= static_cast<double>(trials);
    xs.push_back(static_cast<double>(d));
    onehot_td.push_back(a);
    onehot_t4.push_back(b);
    random_t4.push_back(c);
    t.add_row(
        {std::to_string(d), fixed(a, 4), std::isnan(b) ? "-" : fixed(b, 4), fixed(c, 4), "0.2500"});
  }
  ctx.table(t);
  ctx.result("dims", dims);
  ctx.result("diag_onehot_T_eq_d", onehot_td);
  ctx.result("diag_onehot_T4", onehot_t4);
  ctx.result("diag_random_T4", random_t4);

  const bool sharpens_onehot = onehot_td.size() > 1 && onehot_td.back() > onehot_td.front();
  const bool sharpens_random = random_t4.size() > 1 && random_t4.back() > random_t4.front();
  ctx.note(fmt::format(
      "One-hot inputs (the document's): the diagonal goes from {:.3f} at d = {} to {:.3f} at d = "
      "{}: it gets flatter, because the self-score 1/sqrt(d) shrinks. Random inputs with O(1) "
      "entries: {:.3f} -> {:.3f}, sharper, because |k|^2 / sqrt(d) grows like sqrt(d). The "
      "scaling keeps scores of *random* vectors at unit variance; it does not make one-hot "
      "lookups sharper.",
      onehot_td.front(), dims.front(), onehot_td.back(), dims.back(), random_t4.front(),
      random_t4.back()));
  cmp.add_exact("diagonal sharper at higher d (same one-hot input)", "yes",
                kit::yes_no(sharpens_onehot),
                "one-hot self-scores are 1/sqrt(d), which shrink; only vectors whose length grows "
                "like sqrt(d) (random rows) sharpen");
  cmp.add_exact("diagonal sharper at higher d (random vectors)", "yes",
                kit::yes_no(sharpens_random));
  ctx.compare(cmp);

  LinePlot p = kit::line_plot("Diagonal weight vs dimension (scaled by 1/sqrt(d))", "dimension d",
                              "mean diagonal weight", kit::Axes::kLogX);
  p.series = {{"one-hot, T = d", xs, onehot_td},
              {"one-hot, T = 4", xs, onehot_t4},
              {"random N(0,1), T = 4", xs, random_t4}};
  p.refs = {{RefLine::kHorizontal, 0.25, "uniform over 4 keys"}};
  ctx.figure("sharpening", line_plot_svg(p), "Only inputs whose length grows with d sharpen");
}

}  // namespace

Experiment identity_lookup() {
  Experiment e;
  e.name = "identity-lookup";
  e.source = "002 §39.2";
  e.purpose = "Q = K = I: attention as a soft lookup, and how the diagonal changes with d";
  e.config.add_ints("dims", {4, 8, 16, 32, 64, 128, 256, 512}, "dimensions to try", {.min = 1})
      .add_int("trials", 20, "random draws averaged per dimension", {.min = 1});
  e.quick = {{"dims", "4,16,64"}, {"trials", "5"}};
  e.reference = true;  // its point is the computation: the elementary ops on the tape
  e.run = run;
  return e;
}

}  // namespace attn::experiments
