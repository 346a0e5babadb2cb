// attention-flops [002 Ex. 39.2]: count the FLOPs of one self-attention layer and of an RNN of
// the same width, then measure how many of them per second this machine achieves.
//
//   attnlab run attention-flops
//   attnlab run attention-flops --t 4096 --threads 1
//
// Counting (a multiply-add is 2 FLOPs, as BLAS benchmarks count):
//   attention (one head, width d):  Q K^T  2 T^2 d,   softmax ~4 T^2 (subtract, exp, sum,
//                                   divide) + T^2 scaling,   A V  2 T^2 d
//                                   projections x W_Q, x W_K, x W_V: 3 * 2 T d^2 (if counted)
//   RNN h_t = tanh(W_x x_t + W_h h_{t-1} + b), per step 2 d^2 + 2 d^2 + 3 d, times T.
// So the matmuls of attention cost 4 T^2 d against the RNN's 4 T d^2: a ratio of T / d, and
// attention is the cheaper one below T = d. But FLOPs are not time: the attention FLOPs come in
// two large GEMMs, the RNN's in T small dependent matrix-vector products, so their rates differ
// by an order of magnitude (the measured GFLOP/s column).
#include "experiments/efficient/complexity_table.h"
#include "experiments/kit/kit.h"
#include "nn/rnn/recurrent.h"

namespace attn::experiments {

namespace {

struct Flops {
  double qk, softmax, av, projections, rnn;
  double attention_matmul() const { return qk + av; }
  double attention_core() const { return qk + softmax + av; }
};

Flops count(double t, double d) {
  return {2 * t * t * d, 5 * t * t, 2 * t * t * d, 3 * 2 * t * d * d, t * (4 * d * d + 3 * d)};
}

// Ex. 39.2: the products' FLOPs counted on the tape (the ops a real forward records,
// complexity_table.h) beside the formulas above.
void exercise_counts(int64_t t, int64_t d, const Flops& f, RunContext& ctx) {
  const double attention = attention_product_flops(t, d), rnn = recurrent_product_flops(t, d);
  DocumentComparison cmp(
      fmt::format("002 Ex. 39.2: one layer's matrix-product FLOPs at T = {}, d = {}", t, d));
  cmp.add("self-attention, Q K^T and A V: 4 T^2 d", f.attention_matmul(), attention, 0, "", 0)
      .exact_quantity();
  cmp.add("RNN of the same width, x W_ih^T and h W_hh^T: 4 T d^2",
          static_cast<double>(4 * t * d * d), rnn, 0, "", 0)
      .exact_quantity();
  ctx.compare(cmp);
  kit::record(ctx, {{"counted_attention_flops", attention}, {"counted_rnn_flops", rnn}});
}

// 003's Check Your Understanding 1: one attention layer at T = cyu_t (8,000), counted, and how
// the count grows from T / 2.
void long_sequence_counts(int64_t t, int64_t d, RunContext& ctx) {
  double at_t = 0;
  const double seconds = seconds_of([&] { at_t = attention_product_flops(t, d); });
  const double exponent = std::log(at_t / attention_product_flops(t / 2, d)) / std::log(2.0);
  DocumentComparison cmp(fmt::format(
      "003 Check Your Understanding 1: one attention layer at {} tokens, d = {}", t, d));
  cmp.add("FLOPs of Q K^T and A V: 4 T^2 d", 4.0 * static_cast<double>(t * t * d), at_t, 0, "", 0)
      .exact_quantity();
  // Quadratic and linear differ by 1 in the exponent: a tenth of that is the tolerance.
  cmp.add(fmt::format("quadratic in T: exponent from T = {} to {}", t / 2, t), 2, exponent, 0.1)
      .exact_quantity();  // a ratio of exact counts
  ctx.compare(cmp);
  kit::record(ctx, {{"counted_attention_flops_cyu", at_t}, {"cyu_forward_s", seconds}});
  ctx.note(fmt::format(
      "Why it is a bottleneck at {} tokens: one score matrix holds {:.0f} million floats "
      "({:.0f} MiB, and the softmax keeps more of the same size for backward), and recording "
      "that forward took {:.2f} s here.",
      t, static_cast<double>(t * t) / 1e6, static_cast<double>(t * t) * 4 / (1 << 20), seconds));
}

void run(const Config& cfg, RunContext& ctx) {
  const int64_t t = cfg.get_int("t"), d = cfg.get_int("d");
  const Flops f = count(static_cast<double>(t), static_cast<double>(d));

  ctx.section(fmt::format("Counted FLOPs at T = {}, d = {}", t, d));
  Table tab("One layer, batch 1 (multiply-add = 2 FLOPs)", {"term", "formula", "FLOPs"});
  tab.add_row({"Q K^T", "2 T^2 d", sig(f.qk, 4)});
  tab.add_row({"scale + softmax", "~5 T^2", sig(f.softmax, 4)});
  tab.add_row({"A V", "2 T^2 d", sig(f.av, 4)});
  tab.add_row({"attention matmuls", "4 T^2 d", sig(f.attention_matmul(), 4)});
  tab.add_row({"attention core total", "4 T^2 d + 5 T^2", sig(f.attention_core(), 4)});
  tab.add_row({"+ Q, K, V projections", "6 T d^2", sig(f.projections, 4)});
  tab.add_row({"RNN, same width", "T (4 d^2 + 3 d)", sig(f.rnn, 4)});
  tab.add_row({"attention matmuls / RNN", "~ T / d", fixed(f.attention_matmul() / f.rnn, 2)});
  ctx.table(tab);
  ctx.result("flops_qk", f.qk);
  ctx.result("flops_av", f.av);
  ctx.result("flops_attention_matmul", f.attention_matmul());
  ctx.result("flops_attention_core", f.attention_core());
  ctx.result("flops_projections", f.projections);
  ctx.result("flops_rnn", f.rnn);
  ctx.result("attention_over_rnn", f.attention_matmul() / f.rnn);

  exercise_counts(t, d, f, ctx);
  long_sequence_counts(cfg.get_int("cyu_t"), d, ctx);

  // The table of §39.3 in numbers: which is cheaper, as T grows, and where they cross.
  std::vector<double> ts, att, rnn;
  for (int64_t tt : cfg.get_ints("sweep")) {
    const Flops g = count(static_cast<double>(tt), static_cast<double>(d));
    ts.push_back(static_cast<double>(tt));
    att.push_back(g.attention_matmul());
    rnn.push_back(g.rnn);
  }
  LinePlot p = kit::line_plot(fmt::format("FLOPs per layer, d = {}", d), "sequence length T",
                              "FLOPs", kit::Axes::kLogLog);
  p.series = {{"self-attention 4 T^2 d", ts, att}, {"RNN 4 T d^2", ts, rnn}};
  p.refs = {{RefLine::kVertical, static_cast<double>(d), fmt::format("T = d = {}", d)}};
  ctx.figure("flops", line_plot_svg(p), "O(T^2 d) against O(T d^2): they cross at T = d");

  ctx.section(fmt::format("Measured on this machine ({} threads)", num_threads()));
  Generator gen(ctx.seed());
  const int reps = static_cast<int>(cfg.get_int("reps"));
  const Var q = Var::constant(Tensor::randn({1, 1, t, d}, gen));
  const Var k = Var::constant(Tensor::randn({1, 1, t, d}, gen));
  const Var v = Var::constant(Tensor::randn({1, 1, t, d}, gen));
  const Timing ta = time_median(
      [&] {
        NoGrad off;
        nn::scaled_dot_product_attention(q, k, v);
      },
      reps);
  nn::RNN rnn_layer({.input_size = d, .hidden_size = d, .batch_first = true}, gen);
  const Var x = Var::constant(Tensor::randn({1, t, d}, gen));
  const Timing tr = time_median(
      [&] {
        NoGrad off;
        rnn_layer.forward(x);
      },
      reps);
  const double ga = f.attention_core() / ta.median_s / 1e9, gr = f.rnn / tr.median_s / 1e9;
  Table m("Forward pass, median of " + std::to_string(reps) + " runs",
          {"layer", "FLOPs", "median (ms)", "min (ms)", "GFLOP/s"});
  m.add_row({"self-attention (nn::scaled_dot_product_attention)", sig(f.attention_core(), 4),
             fixed(ta.median_s * 1e3, 3), fixed(ta.min_s * 1e3, 3), fixed(ga, 1)});
  m.add_row({"RNN (nn::RNN, tanh)", sig(f.rnn, 4), fixed(tr.median_s * 1e3, 3),
             fixed(tr.min_s * 1e3, 3), fixed(gr, 1)});
  ctx.table(m);
  ctx.result("threads", num_threads());
  ctx.result("attention_ms", ta.median_s * 1e3);
  ctx.result("rnn_ms", tr.median_s * 1e3);
  ctx.result("attention_gflops", ga);
  ctx.result("rnn_gflops", gr);
  ctx.note(fmt::format(
      "Attention does {:.1f}x the RNN's arithmetic but takes {:.2f}x its time: it runs at "
      "{:.1f} GFLOP/s against the RNN's {:.1f}, because two big GEMMs keep the vector units busy "
      "while {} dependent steps of a {}x{} matrix-vector product cannot.",
      f.attention_core() / f.rnn, ta.median_s / tr.median_s, ga, gr, t, d, d));
  complexity_table(cfg, ctx);
}

}  // namespace

Experiment attention_flops() {
  Experiment e;
  e.name = "attention-flops";
  e.source = "002 Ex. 39.2";
  e.purpose = "FLOPs of one attention layer vs an RNN of the same width, counted and measured";
  e.config.add_int("t", 1000, "sequence length T", {.min = 1})
      .add_int("d", 64, "width d (head dim = RNN hidden size)", {.min = 1})
      .add_ints("sweep", {8, 16, 32, 64, 128, 256, 512, 1000, 2048, 4096}, "T values of the plot",
                {.min = 1})
      .add_int("reps", 20, "timed repetitions (the median is reported)", {.min = 1})
      .add_int("cyu_t", 8000, "length of 003's Check Your Understanding 1 count", {.min = 2});
  add_complexity_fields(e.config);
  e.quick = {{"reps", "3"}, {"cyu_t", "2000"}};
  e.run = run;
  return e;
}

}  // namespace attn::experiments
