// cat-sat-mat [000 §III]: the hand computation "cat sat mat" with Q = K = V = X.
//
//   attnlab run cat-sat-mat
//
// cat = [1,0], sat = [0,1], mat = [1,1]; W_Q = W_K = W_V = I. The document works the example
// by hand to 2 decimals: its scores are right, but its attention matrix is not the softmax of
// those scores. We recompute each step, show what the hand-worked numbers would need, and find
// which slip explains each row: rows 0 and 1 are the softmax of the *unscaled* scores (the
// 1/sqrt(d_k) was dropped), row 2 matches neither version. Then a backward of L = sum(out o G)
// for a fixed G, each gradient beside its closed form by hand (experiments/common/
// hand_gradients.h).
#include "experiments/common/attention_steps.h"
#include "experiments/common/hand_gradients.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// The document's hand-worked numbers (000 §III), to 2 decimals.
const std::vector<std::vector<double>> kDocRaw{{1, 0, 1}, {0, 1, 1}, {1, 1, 2}};
const std::vector<std::vector<double>> kDocScaled{
    {0.71, 0, 0.71}, {0, 0.71, 0.71}, {0.71, 0.71, 1.41}};
const std::vector<std::vector<double>> kDocA{
    {0.42, 0.16, 0.42}, {0.16, 0.42, 0.42}, {0.27, 0.27, 0.46}};
const std::vector<double> kDocOut0{0.84, 0.58};

constexpr double kTol2 = 5e-3 + 1e-6;  // agreement to the 2 decimals the document writes

void run(const Config& cfg, RunContext& ctx) {
  const std::vector<std::string> words{"cat", "sat", "mat"};
  const Tensor x = matrix_from(3, 2, cfg.get_reals("x"), "--x");
  const double scale = 1 / std::sqrt(2.0);
  Var X = Var::constant(x);
  AttentionSteps s = attention_steps(X, X, X, scale);       // Q = K = V = X
  AttentionSteps unscaled = attention_steps(X, X, X, 1.0);  // the same without 1/sqrt(d_k)
  const Tensor raw = matmul(X, X, false, true).value();

  ctx.section("Step by step (Q = K = V = X)");
  ctx.matrix("X", x, words, {"d0", "d1"});
  ctx.matrix("QK^T", raw, words, words);
  ctx.matrix("scores = QK^T / sqrt(2)", s.scores.value(), words, words);
  ctx.matrix("A = softmax(scores)", s.weights.value(), words, words);
  ctx.matrix("out = A V", s.out.value(), words, {"d0", "d1"});
  ctx.matrix("softmax(QK^T) without the scaling", unscaled.weights.value(), words, words);

  // The document's own output row 0 follows from its own (wrong) weights: 0.42*[1,0] +
  // 0.16*[0,1] + 0.42*[1,1]. Computing it shows the arithmetic chain is consistent.
  const Tensor doc_a = matrix_from(3, 3, {0.42, 0.16, 0.42, 0.16, 0.42, 0.42, 0.27, 0.27, 0.46});
  const Tensor out_from_doc_a = matmul(Var::constant(doc_a), X).value();
  ctx.result("out_row0_from_document_weights", row_values(out_from_doc_a, 0));

  ctx.section("The hand computation beside ours");
  DocumentComparison cmp("000 §III: hand-worked vs ours");
  cmp.add_rows("QK^T", kDocRaw, raw, kTol2, "", 2);
  cmp.add_rows("scores", kDocScaled, s.scores.value(), kTol2, "", 2);
  const std::string why01 =
      "the hand computation skipped the 1/sqrt(d_k): softmax of the unscaled row gives "
      "the document's numbers (see the next table)";
  const std::string why2 =
      "matches neither the scaled nor the unscaled softmax (an arithmetic slip)";
  cmp.add("A[0,:]", kDocA[0], row_values(s.weights.value(), 0), kTol2, why01, 2);
  cmp.add("A[1,:]", kDocA[1], row_values(s.weights.value(), 1), kTol2, why01, 2);
  cmp.add("A[2,:]", kDocA[2], row_values(s.weights.value(), 2), kTol2, why2, 2);
  cmp.add("out[0,:]", kDocOut0, row_values(s.out.value(), 0), kTol2,
          "follows from the document's wrong row 0 of A (0.42+0.42, 0.16+0.42)", 2);
  ctx.compare(cmp);

  DocumentComparison diag("Diagnosis: the document's A vs softmax of the UNscaled scores");
  for (int r = 0; r < 3; ++r)
    diag.add(fmt::format("A[{},:] vs unscaled", r), kDocA[r],
             row_values(unscaled.weights.value(), r), kTol2,
             r == 2 ? "not explained by dropping the scaling either" : "", 2);
  diag.add("out[0,:] from the document's own A", kDocOut0, row_values(out_from_doc_a, 0), kTol2, "",
           2);
  ctx.compare(diag);
  ctx.note(
      "Rows 0 and 1 of the document's matrix are softmax([1,0,1]) = [0.42, 0.16, 0.42]: the "
      "division by sqrt(2) it performed one step earlier was not carried into the softmax. With "
      "the scaling the weights are [0.40, 0.20, 0.40]. Row 2 ([0.27, 0.27, 0.46]) is neither "
      "softmax([0.71, 0.71, 1.41]) = [0.25, 0.25, 0.50] nor softmax([1, 1, 2]) = [0.21, 0.21, "
      "0.58]. The qualitative reading survives: cat attends equally to itself and mat, mat "
      "attends most to itself.");

  const Heatmap h =
      kit::numbered_heatmap(s.weights.value(), words, words, "cat sat mat: attention weights", 80);
  ctx.figure("attention", heatmap_svg(h), "softmax(Q K^T / sqrt(2)) with Q = K = X");

  ctx.section("Gradients by hand: L = sum(out o G)");
  report_hand_gradients(ctx, {.x = x,
                              .w_q = identity(2),
                              .w_k = identity(2),
                              .w_v = identity(2),
                              .scale = scale,
                              .g = matrix_from(3, 2, cfg.get_reals("g"), "--g"),
                              .tokens = words});
}

}  // namespace

Experiment cat_sat_mat() {
  Experiment e;
  e.name = "cat-sat-mat";
  e.source = "000 §III";
  e.purpose = "The 'cat sat mat' hand computation, checked step by step";
  e.config.add_reals("x", {1, 0, 0, 1, 1, 1}, "embeddings of cat, sat, mat (3 x 2, row-major)")
      .add_reals("g", {1, -1, 0.5, 2, -1.5, 0.5},
                 "the fixed upstream gradient G = dL/dout of the loss L = sum(out o G) (3 x 2)");
  e.reference = true;  // its point is the computation: the elementary ops on the tape
  // The two matrices' sizes, before the run folder exists (run() reads them the same way).
  e.check = [](const Config& cfg) {
    (void)matrix_from(3, 2, cfg.get_reals("x"), "--x");
    (void)matrix_from(3, 2, cfg.get_reals("g"), "--g");
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
