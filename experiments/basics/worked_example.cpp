// worked-example [002 §39.2.1]: self-attention on three 2-D tokens, every intermediate shown.
//
//   attnlab run worked-example
//   attnlab run worked-example --scaled false      (what changes without the 1/sqrt(d_k))
//
// X = [[1,0],[0,1],[1,1]], identity query/key projections (Q = K = X), W_V = [[1,0],[0,2]].
// The document prints its matrices to 3 decimals; its prose quotes different softmax numbers
// for rows 0 and 2. We print both next to ours and a double-precision hand check, so a reader
// can see which is right. Then a backward of L = sum(out o G) for a fixed G: every gradient on
// the tape (out, A, scores, Q, K, V, X) beside its closed form computed by hand in double
// precision (experiments/common/hand_gradients.h).
// Step through: break SoftmaxOp::forward, then `p *y.data()@9`; break SoftmaxOp::backward.
#include "experiments/common/attention_steps.h"
#include "experiments/common/hand_gradients.h"
#include "experiments/common/tape_figure.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// The document's printed output (002 §39.2.1), rounded to 3 decimals there.
const std::vector<std::vector<double>> kDocV{{1, 0}, {0, 2}, {1, 2}};
const std::vector<std::vector<double>> kDocScores{
    {0.707, 0, 0.707}, {0, 0.707, 0.707}, {0.707, 0.707, 1.414}};
const std::vector<std::vector<double>> kDocA{
    {0.401, 0.198, 0.401}, {0.198, 0.401, 0.401}, {0.248, 0.248, 0.503}};
const std::vector<std::vector<double>> kDocOut{{0.802, 1.198}, {0.599, 1.604}, {0.752, 1.503}};
// The same section's prose, quoting rows 0 and 2 to 2 decimals.
const std::vector<double> kProseScores0{0.71, 0, 0.71}, kProseSoftmax0{0.39, 0.22, 0.39};
const std::vector<double> kProseScores2{0.71, 0.71, 1.41}, kProseSoftmax2{0.27, 0.27, 0.46};

constexpr double kTol3 = 5e-4 + 1e-6;  // agreement to 3 printed decimals
constexpr double kTol2 = 5e-3 + 1e-6;  // ... to 2 decimals

// The prose's quoted numbers against ours, the double-precision hand check of rows 0 and 2, and
// the score gaps the prose's weights imply.
void prose_and_hand_check(const AttentionSteps& s,
                          double scale,
                          const std::vector<double>& hand0,
                          const std::vector<double>& hand2,
                          bool document_settings,
                          RunContext& ctx) {
  const int64_t t = s.weights.value().size(0);
  const std::string why = "contradicts the document's own printed output (which matches ours)";
  DocumentComparison prose("002 §39.2.1: the prose's numbers vs ours");
  prose.add("prose scores row 0", kProseScores0, row_values(s.scores.value(), 0), kTol2, why, 2);
  prose.add("prose softmax row 0", kProseSoftmax0, row_values(s.weights.value(), 0), kTol2, why, 2);
  if (t > 2) {
    prose.add("prose scores row 2", kProseScores2, row_values(s.scores.value(), 2), kTol2, why, 2);
    prose.add("prose softmax row 2", kProseSoftmax2, row_values(s.weights.value(), 2), kTol2, why,
              2);
  }
  ctx.compare(prose);

  Table check("Hand check: softmax in double precision with std::exp, no library code",
              {"row", "by hand", "attnlab (float32)"});
  check.add_row(
      {"0", format_numbers(hand0, 4), format_numbers(row_values(s.weights.value(), 0), 4)});
  if (t > 2)
    check.add_row(
        {"2", format_numbers(hand2, 4), format_numbers(row_values(s.weights.value(), 2), 4)});
  ctx.table(check);

  // How far off is the prose? A softmax ratio p_i/p_j equals exp(score_i - score_j), so the
  // quoted weights imply a score gap we can compare with the real one (1/sqrt(2) = 0.707).
  const double gap0 = std::log(kProseSoftmax0[0] / kProseSoftmax0[1]);
  const double gap2 = std::log(kProseSoftmax2[2] / kProseSoftmax2[0]);
  ctx.result("prose_implied_gap_row0", gap0);
  ctx.result("prose_implied_gap_row2", gap2);
  ctx.result("true_gap", scale);
  if (document_settings)  // the argument below is about the document's own numbers
    ctx.note(fmt::format(
        "Which is right: the printed matrices. A softmax ratio p_i / p_j is exp(s_i - s_j). The "
        "prose's row 0 (0.39 / 0.22) implies a score gap of {:.3f} and its row 2 (0.46 / 0.27) a "
        "gap "
        "of {:.3f}, but both real gaps are 1/sqrt(2) = {:.3f}; exp(0.707) / (2 exp(0.707) + 1) = "
        "{:.4f}, the printed 0.401.",
        gap0, gap2, 1 / std::sqrt(2.0), hand0[0]));
}

// The matrices from the fields: X (T x d_model), W_V (d_model x d_model), G (T x d_model). A
// list of the wrong length is a UsageError naming its flag; `check` calls this too, so a bad
// list is refused before the run folder exists.
struct Inputs {
  int64_t t, d;
  Tensor x, wv, g;
};
Inputs read_inputs(const Config& cfg) {
  const int64_t d = cfg.get_int("d_model");
  const auto& xv = cfg.get_reals("x");
  if (xv.size() % static_cast<size_t>(d) != 0)
    throw UsageError(
        fmt::format("--x: {} numbers do not split into rows of d_model = {}", xv.size(), d));
  const int64_t t = static_cast<int64_t>(xv.size()) / d;
  return {t, d, matrix_from(t, d, xv, "--x"), matrix_from(d, d, cfg.get_reals("w_v"), "--w_v"),
          matrix_from(t, d, cfg.get_reals("g"), "--g")};
}

void run(const Config& cfg, RunContext& ctx) {
  const auto [t, d, x, wv, g] = read_inputs(cfg);
  const double scale = cfg.get_bool("scaled") ? 1 / std::sqrt(static_cast<double>(d)) : 1.0;
  const auto tok = index_labels(t, "x");

  // Every step is an op on the tape (X is a leaf that wants a gradient, so they are recorded).
  Var X = Var::parameter(x, "X");
  Var V = matmul(X, Var::constant(wv));  // Q = K = X W_I = X
  AttentionSteps s = attention_steps(X, X, V, scale);
  Tensor exp_scores = s.scores.value().clone();
  for (int64_t i = 0; i < exp_scores.numel(); ++i) exp_scores[i] = std::exp(exp_scores[i]);

  ctx.section("Every intermediate");
  ctx.matrix("X", x, tok, index_labels(d, "dim "));
  ctx.matrix("V", V.value(), tok, index_labels(d, "dim "));
  ctx.matrix("scores", s.scores.value(), tok, tok);
  ctx.note(fmt::format("scores = Q K^T * {:.4f} ({}).", scale,
                       cfg.get_bool("scaled") ? "1/sqrt(d_k)" : "unscaled"));
  ctx.matrix("exp_scores", exp_scores, tok, tok);
  ctx.matrix("A", s.weights.value(), tok, tok);
  ctx.matrix("out", s.out.value(), tok, index_labels(d, "dim "));
  Tensor sums({t});
  for (int64_t r = 0; r < t; ++r)
    for (int64_t c = 0; c < t; ++c) sums[r] += s.weights.value()[r * t + c];
  ctx.matrix("row_sums", sums.reshape({1, t}), {"sum"}, tok);
  ctx.note("The tape of this computation (one record per op, replayed in reverse by backward):");
  show_tape(ctx, tape());
  tape().clear();

  // A check that uses no library code: softmax of row 0 and row 2 in double precision.
  const double a = std::exp(scale), b = std::exp(2 * scale);
  const std::vector<double> hand0{a / (2 * a + 1), 1 / (2 * a + 1), a / (2 * a + 1)};
  const std::vector<double> hand2{a / (2 * a + b), a / (2 * a + b), b / (2 * a + b)};
  ctx.result("hand_check_row0", hand0);
  ctx.result("hand_check_row2", hand2);

  ctx.section("The document beside ours");
  DocumentComparison cmp("002 §39.2.1: printed output vs ours");
  cmp.add_rows("V", kDocV, V.value(), kTol3);
  cmp.add_rows("scores", kDocScores, s.scores.value(), kTol3);
  cmp.add_rows("A", kDocA, s.weights.value(), kTol3);
  cmp.add_rows("out", kDocOut, s.out.value(), kTol3);
  cmp.add("row sums", {1, 1, 1}, values(sums), kTol3);
  ctx.compare(cmp);

  prose_and_hand_check(s, scale, hand0, hand2, cfg.changed().empty(), ctx);

  const std::vector<std::string> named{"x0=[1,0]", "x1=[0,1]", "x2=[1,1]"};
  const Heatmap h = kit::numbered_heatmap(s.weights.value(), t == 3 ? named : tok,
                                          t == 3 ? named : tok, "Attention matrix A", 90);
  ctx.figure("attention", heatmap_svg(h), "A = softmax(Q K^T / sqrt(d_k)), rows sum to 1");

  ctx.section("Gradients by hand: L = sum(out o G)");
  report_hand_gradients(ctx, {.x = x,
                              .w_q = identity(d),
                              .w_k = identity(d),
                              .w_v = wv,
                              .scale = scale,
                              .g = g,
                              .tokens = tok});
}

}  // namespace

Experiment worked_example() {
  Experiment e;
  e.name = "worked-example";
  e.source = "002 §39.2.1";
  e.purpose = "Self-attention by hand on 3 tokens: every intermediate vs the document";
  e.config.add_reals("x", {1, 0, 0, 1, 1, 1}, "input rows X, row-major (T x d_model)")
      .add_int("d_model", 2, "width of each token vector (= d_k)", {.min = 1})
      .add_reals("w_v", {1, 0, 0, 2}, "value projection W_V, row-major (d_model x d_model)")
      .add_bool("scaled", true, "divide the scores by sqrt(d_k)")
      .add_reals("g", {1, -1, 0.5, 2, -1.5, 0.5},
                 "the fixed upstream gradient G = dL/dout of the loss L = sum(out o G), row-major "
                 "(T x d_model)");
  e.reference = true;  // its point is the computation: the elementary ops on the tape
  e.check = [](const Config& cfg) { (void)read_inputs(cfg); };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
