// attention-rank [004 §2.4, §4.1]: how many directions an attention matrix really uses.
//
//   attnlab run attention-rank                  # three parts, about 1 min on 2 idle cores
//   attnlab run attention-rank --lengths 64,256 --widths 2,8,32 --logit_scales 0.01,1,10
//
// 1. 004 §2.4: QK^T has rank at most d; softmax "raises the rank"; without softmax (linear
//    attention, phi(Q) phi(K)^T) the rank stays at the feature width. Random Q, K (T,d) in
//    float32, singular values in double (attention_rank_svd.cpp), the numerical rank at the
//    threshold s_max * T * eps(float32), over a grid of T and d and over logit scales.
// 2. 004 §4.1 (Linformer): trained attention matrices are low rank, more so in higher layers. A
//    character LM on the built-in corpus, trained over --seeds seeds; the share of each layer's
//    attention energy in its top --top_k singular values (attention_rank_layers.cpp).
// 3. Linformer's projection rank k against held-out accuracy on associative recall
//    (attention_rank_linformer.cpp).
// Step through: rank::singular_values (the rotations), nn::LinformerAttention::forward.
#include "experiments/efficient/attention_rank.h"
#include "experiments/kit/kit.h"
#include "nn/attention/linear_attention.h"

namespace attn::experiments {

namespace rank {

namespace {

// The three (T,T) matrices of one draw of Q, K (T,d), entries N(0,1).
struct RandomCell {
  int64_t t = 0, d = 0;
  std::vector<double> scores, weights, linear;  // singular values, largest first
  int64_t rank_scores = 0, rank_weights = 0, rank_linear = 0;
  double weights_beyond_d = 0;  // 1 - top_energy(weights, d): energy outside d directions
};

// scores = scale QK^T / sqrt(d); weights = softmax(scores) row by row; linear = phi(Q) phi(K)^T
// with phi = elu + 1 (nn/attention/linear_attention.h), each row divided by its sum as linear
// attention does (a diagonal scaling: it changes no rank).
RandomCell random_cell(int64_t t, int64_t d, double scale, Generator& gen) {
  NoGrad off;
  const Var q = Var::constant(Tensor::randn({t, d}, gen));
  const Var k = Var::constant(Tensor::randn({t, d}, gen));
  const Var scores =
      matmul(q, k, false, true, static_cast<real>(scale / std::sqrt(static_cast<double>(d))));
  const Var weights = softmax(scores);
  const Var kernel = matmul(nn::elu_feature_map(q), nn::elu_feature_map(k), false, true);
  const Var linear = div(kernel, sum(kernel, 1, true));
  RandomCell c{t, d};
  c.scores = singular_values(scores.value());
  c.weights = singular_values(weights.value());
  c.linear = singular_values(linear.value());
  c.rank_scores = numerical_rank(c.scores, t);
  c.rank_weights = numerical_rank(c.weights, t);
  c.rank_linear = numerical_rank(c.linear, t);
  c.weights_beyond_d = 1 - top_energy(c.weights, d);
  return c;
}

// s_i / s_0 against i + 1, for a log-scale spectrum plot.
Series normalised(const std::string& name, const std::vector<double>& s, bool dashed = false) {
  Series out{name, {}, {}, "", dashed, false};
  for (size_t i = 0; i < s.size(); ++i) {
    out.x.push_back(static_cast<double>(i + 1));
    out.y.push_back(s[i] / s.front());
  }
  return out;
}

void spectrum_figure(const RandomCell& c, RunContext& ctx) {
  LinePlot p =
      kit::line_plot(fmt::format("Singular values, T = {}, d = {} (logit scale 1)", c.t, c.d),
                     "index i", "s_i / s_1", kit::Axes::kLogY);
  p.series = {normalised("QK^T / sqrt(d)", c.scores),
              normalised("softmax(QK^T / sqrt(d))", c.weights),
              normalised("linear: phi(Q) phi(K)^T, rows normalised", c.linear, true)};
  p.refs = {{RefLine::kHorizontal, rank_threshold(c.t), "rank threshold T eps32"},
            {RefLine::kVertical, static_cast<double>(c.d), "d"}};
  ctx.figure("random_spectra", line_plot_svg(p),
             "Normalised singular values of the three matrices of one random draw");
}

}  // namespace

void random_matrix_part(const Config& cfg, RunContext& ctx, DocumentComparison& cmp) {
  const auto& lengths = cfg.get_ints("lengths");
  const auto& widths = cfg.get_ints("widths");
  ctx.section("Part 1: the rank of QK^T, softmax(QK^T) and linear attention (random Q, K)");
  Generator gen(ctx.seed());
  Table t(fmt::format("Numerical rank (singular values above s_max T {:.3g}), Q, K ~ N(0,1)",
                      static_cast<double>(std::numeric_limits<float>::epsilon())),
          {"T", "d", "QK^T/sqrt(d)", "softmax", "linear (elu+1)", "softmax energy beyond top d"});
  bool scores_within_d = true, softmax_above_d = true, linear_within_d = true,
       linear_below_softmax = true;
  RandomCell widest_gap;
  for (int64_t len : lengths)
    for (int64_t d : widths) {
      const RandomCell c = random_cell(len, d, 1.0, gen);
      t.add_row({std::to_string(len), std::to_string(d), std::to_string(c.rank_scores),
                 std::to_string(c.rank_weights), std::to_string(c.rank_linear),
                 fmt::format("{:.2e}", c.weights_beyond_d)});
      scores_within_d &= c.rank_scores <= d;
      softmax_above_d &= c.rank_weights > d;
      linear_within_d &= c.rank_linear <= d;
      linear_below_softmax &= c.rank_linear < c.rank_weights;
      const std::string key = fmt::format("T{}_d{}", len, d);
      kit::record(ctx, {{"rank_scores_" + key, c.rank_scores},
                        {"rank_softmax_" + key, c.rank_weights},
                        {"rank_linear_" + key, c.rank_linear},
                        {"softmax_energy_beyond_d_" + key, c.weights_beyond_d}});
      if (len == lengths.back() && d == widths.front()) widest_gap = c;
    }
  ctx.table(t);
  spectrum_figure(widest_gap, ctx);

  // The logit scale decides how far softmax departs from 1 + (a rank-d matrix): exp(x) = 1 + x +
  // x^2/2 + ..., and the k-th Hadamard power of a rank-d matrix adds rank up to C(d+k-1, k) with
  // weight scale^k / k!, so a small scale leaves only the first few powers above the threshold.
  const int64_t t_max = lengths.back(), d_min = widths.front();
  Table s(fmt::format("Softmax against the logit scale, T = {}, d = {}", t_max, d_min),
          {"logit scale", "rank(scores)", "rank(softmax)", "softmax energy beyond top d"});
  std::vector<double> scale_ranks;
  for (double scale : cfg.get_reals("logit_scales")) {
    const RandomCell c = random_cell(t_max, d_min, scale, gen);
    s.add_row({fmt::format("{:g}", scale), std::to_string(c.rank_scores),
               std::to_string(c.rank_weights), fmt::format("{:.2e}", c.weights_beyond_d)});
    scale_ranks.push_back(static_cast<double>(c.rank_weights));
  }
  ctx.table(s);
  ctx.result("softmax_rank_by_logit_scale", scale_ranks);
  ctx.note(
      "Softmax's extra rank is real but thin: the energy outside the top d directions is the "
      "share of the squared Frobenius norm that a rank-d approximation would miss, and it "
      "shrinks with the logit scale (at scale -> 0, softmax -> 1/T + a rank-d correction).");

  cmp.add_exact("QK^T / sqrt(d): numerical rank at most d (every T, d)", "yes",
                kit::yes_no(scores_within_d));
  cmp.add_exact("softmax(QK^T / sqrt(d)): rank above d (every T > d, logit scale 1)", "yes",
                kit::yes_no(softmax_above_d));
  cmp.add_exact("linear attention phi(Q) phi(K)^T: rank at most the feature width d", "yes",
                kit::yes_no(linear_within_d));
  cmp.add_exact("without softmax (linear attention) the rank is lower (every T, d)", "yes",
                kit::yes_no(linear_below_softmax));
}

}  // namespace rank

namespace {

void run(const Config& cfg, RunContext& ctx) {
  DocumentComparison rank_claims("004 §2.4: softmax and the rank of attention vs ours");
  rank::random_matrix_part(cfg, ctx, rank_claims);
  ctx.compare(rank_claims);
  DocumentComparison layer_claims("004 §4.1: trained attention is low rank vs ours");
  rank::trained_layers_part(cfg, ctx, layer_claims);
  rank::linformer_part(cfg, ctx, layer_claims);
  ctx.compare(layer_claims);
}

void check(const Config& c) {
  check_model(c);
  check_optimizer(c);
  if (c.get_int("warmup") >= c.get_int("steps"))  // the cosine schedule needs steps after it
    throw UsageError(fmt::format("attention-rank: --steps {} must exceed --warmup {}",
                                 c.get_int("steps"), c.get_int("warmup")));
  const auto& lengths = c.get_ints("lengths");
  const auto& widths = c.get_ints("widths");
  if (!std::is_sorted(lengths.begin(), lengths.end()) ||
      !std::is_sorted(widths.begin(), widths.end()))
    throw UsageError("attention-rank: --lengths and --widths must be increasing");
  if (lengths.front() <= widths.back())  // at T <= d no matrix can have rank above d
    throw UsageError(
        fmt::format("attention-rank: every --lengths T must exceed every --widths d (T {} <= d {})",
                    lengths.front(), widths.back()));
  if (c.get_int("top_k") >= c.get_int("block_len"))
    throw UsageError(fmt::format("attention-rank: --top_k {} must be below --block_len {}",
                                 c.get_int("top_k"), c.get_int("block_len")));
  const int64_t recall_len = 2 * c.get_int("recall_pairs") + 2;
  for (int64_t k : c.get_ints("linformer_ranks"))
    if (k >= recall_len)
      throw UsageError(fmt::format(
          "attention-rank: --linformer_ranks {} must be below the recall length T = {} (k = T, "
          "no compression, is the reference and always runs)",
          k, recall_len));
}

}  // namespace

Experiment attention_rank() {
  Experiment e;
  e.name = "attention-rank";
  e.source = "004 §2.4, §4.1";
  e.purpose =
      "Rank of QK^T, softmax and linear attention; spectra of trained attention; Linformer k";
  e.config.add_ints("lengths", {32, 64, 128}, "part 1: sequence lengths T", {.min = 2, .max = 256})
      .add_ints("widths", {4, 8, 16}, "part 1: head widths d", {.min = 1, .max = 256})
      .add_reals("logit_scales", {0.01, 0.1, 1, 4}, "part 1: factors on the scores",
                 {.min = 0, .min_exclusive = true})
      .add_int("seeds", 3, "part 2: trained models (their spread sets the tolerances)",
               {.min = 1, .max = 10})
      .add_int("top_k", 8, "part 2: singular values whose energy share is reported", {.min = 1})
      .add_int("heldout_windows", 16, "part 2: held-out windows whose attention is analysed",
               {.min = 1, .max = 256})
      .add_int("recall_pairs", 6, "part 3: recall key-value pairs (T = 2 pairs + 2)",
               {.min = 2, .max = 10})
      .add_ints("linformer_ranks", {1, 2, 4, 8}, "part 3: Linformer projection ranks k < T",
                {.min = 1})
      .add_int("recall_steps", 1000, "part 3: training steps per rank", {.min = 1});
  add_model_fields(e.config, {.d_model = 32, .nhead = 2, .num_layers = 4, .dim_ff = 64});
  add_optimizer_fields(
      e.config,
      {.steps = 400, .batch_size = 32, .lr = 3e-3, .schedule = "cosine", .warmup = 40, .clip = 1});
  add_data_fields(e.config, {.block_len = 64});
  add_eval_fields(e.config, {.eval_size = 500});
  e.quick = {{"lengths", "16,32"},   {"widths", "2,4"},
             {"steps", "30"},        {"warmup", "5"},
             {"seeds", "2"},         {"heldout_windows", "4"},
             {"recall_steps", "40"}, {"linformer_ranks", "1,4"},
             {"eval_size", "100"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
