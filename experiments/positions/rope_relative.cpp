// rope-relative [001 "Positional encoding", 000 §VIII, 004 §3.2]: with rotary positions the
// score of a query at i and a key at j depends on the positions only through i - j; with
// positions ADDED to the vectors (sinusoidal or learned) it depends on i and j themselves.
//
//   attnlab run rope-relative
//   attnlab run rope-relative --head_dim 128 --positions 256 --trials 20
//
// Two measurements per scheme, on random N(0,1) queries and keys (head_dim channels):
//  1. same content everywhere (q at every position, k at every position): if the score depends
//     on i - j alone, the score matrix is constant along each diagonal. The largest deviation
//     from its diagonal's mean, relative to the largest |score|, is measured;
//  2. different content at every position, and every position moved by the same amount
//     (--shift_by): relative-only scores do not change at all; absolute ones do.
// Schemes: RoPE in both channel pairings (rotate_half: GPT-NeoX / Hugging Face; interleaved:
// the complex-number form of 004's llama code), the sinusoidal table added to q and k, and a
// random table added (an untrained learned table).
// Step through: attn::nn::apply_rope (nn/positional/rope.h), then pairwise_dots
// (experiments/common/offset_spread.h): scores in double (the 1/sqrt(D) of attention would scale
// every entry alike).
#include "experiments/common/offset_spread.h"
#include "experiments/kit/kit.h"
#include "nn/positional/rope.h"
#include "nn/positional/sinusoidal.h"

namespace attn::experiments {

namespace {

enum class Scheme { kRopeHalf, kRopeInterleaved, kSinusoidal, kLearned };
const Scheme kSchemes[] = {Scheme::kRopeHalf, Scheme::kRopeInterleaved, Scheme::kSinusoidal,
                           Scheme::kLearned};
// Per scheme, in kSchemes order: its name in tables and figures, and its result-key suffix.
const char* const kSchemeNames[] = {"rope (rotate_half)", "rope (interleaved, llama)",
                                    "sinusoidal, added", "learned (random), added"};
const char* const kSchemeKeys[] = {"rope_rotate_half", "rope_interleaved", "sinusoidal_added",
                                   "learned_added"};

std::string scheme_name(Scheme s) {
  return kSchemeNames[static_cast<int>(s)];
}
std::string scheme_key(Scheme s) {
  return kSchemeKeys[static_cast<int>(s)];
}

// x (N,D) at positions start..start+N-1 with the scheme's positions applied. `table` holds
// the additive rows (at least start+N of them) for the additive schemes.
Tensor place(
    const Tensor& x, Scheme s, int64_t start, const Tensor& sin_table, const Tensor& learned) {
  const int64_t n = x.size(0), d = x.size(1);
  if (s == Scheme::kRopeHalf || s == Scheme::kRopeInterleaved) {
    NoGrad off;
    const RopeStyle style =
        s == Scheme::kRopeHalf ? RopeStyle::kRotateHalf : RopeStyle::kInterleaved;
    return nn::apply_rope(Var::constant(x.reshape({1, 1, n, d})), start, style)
        .value()
        .reshape({n, d});
  }
  const Tensor& table = s == Scheme::kSinusoidal ? sin_table : learned;
  Tensor out = x.clone();
  for (int64_t p = 0; p < n; ++p)
    for (int64_t c = 0; c < d; ++c) out[p * d + c] += table[(start + p) * d + c];
  return out;
}

// (N,D) with every row equal to row (1,D) v.
Tensor repeat_row(const Tensor& v, int64_t n) {
  const int64_t d = v.numel();
  Tensor out({n, d});
  for (int64_t p = 0; p < n; ++p)
    for (int64_t c = 0; c < d; ++c) out[p * d + c] = v[c];
  return out;
}

// Per scheme, the largest deviation from relative-only scores over the trials (relative to the
// largest |score|): along the diagonals with the same content everywhere, and under a shift.
struct Deviations {
  std::map<Scheme, double> toeplitz, shifted;
  std::map<Scheme, std::vector<double>> first_scores;  // trial 0, same content, for the figures
  std::vector<double> offsets, rope_curve;             // trial 0's RoPE (rotate_half) diagonals
  double worst(Scheme s) const { return std::max(toeplitz.at(s), shifted.at(s)); }
  double least(Scheme s) const { return std::min(toeplitz.at(s), shifted.at(s)); }
};

Deviations measure(const Config& cfg, Generator& gen) {
  const int64_t d = cfg.get_int("head_dim"), n = cfg.get_int("positions");
  const int64_t shift = cfg.get_int("shift_by");
  const Tensor sin_table = nn::sinusoidal_table(n + shift, d);
  const Tensor learned = Tensor::randn({n + shift, d}, gen);
  auto dots = [&](const Tensor& q, const Tensor& k, Scheme s, int64_t start) {
    return pairwise_dots(place(q, s, start, sin_table, learned),
                         place(k, s, start, sin_table, learned), n);
  };
  Deviations m;
  for (int64_t t = 0; t < cfg.get_int("trials"); ++t) {
    const Tensor q1 = Tensor::randn({1, d}, gen), k1 = Tensor::randn({1, d}, gen);
    const Tensor qs = Tensor::randn({n, d}, gen), ks = Tensor::randn({n, d}, gen);
    for (Scheme s : kSchemes) {
      // 1. same content at every position: constant diagonals iff relative-only.
      const std::vector<double> same = dots(repeat_row(q1, n), repeat_row(k1, n), s, 0);
      const OffsetSpread sp = spread_by_offset(same, n, /*absolute=*/false);
      m.toeplitz[s] = std::max(m.toeplitz[s], sp.max_deviation / sp.max_abs);
      if (t == 0) {
        m.first_scores[s] = same;
        if (s == Scheme::kRopeHalf) m.offsets = sp.offsets, m.rope_curve = sp.means;
      }
      // 2. different content, every position moved by `shift`.
      const std::vector<double> at0 = dots(qs, ks, s, 0), moved = dots(qs, ks, s, shift);
      const double diff = kit::max_abs_diff(moved, at0);
      double scale = 0;
      for (double x : at0) scale = std::max(scale, std::abs(x));
      m.shifted[s] = std::max(m.shifted[s], diff / scale);
    }
  }
  return m;
}

void plot_scores(const Deviations& m, int64_t n, RunContext& ctx) {
  const int64_t hn = std::min<int64_t>(n, 32);
  auto panel = [&](Scheme s) {
    Tensor v({hn, hn});
    for (int64_t i = 0; i < hn; ++i)
      for (int64_t j = 0; j < hn; ++j)
        v.at({i, j}) = static_cast<real>(m.first_scores.at(s)[i * n + j]);
    return Heatmap{.values = v,
                   .title = scheme_name(s),
                   .x_label = "key position j",
                   .y_label = "query position i"};
  };
  std::vector<Heatmap> panels;
  for (Scheme s : kSchemes) panels.push_back(panel(s));
  ctx.figure("scores_same_content",
             heatmap_grid_svg(panels, 2, "q . k with the same q and k at every position"),
             "RoPE gives constant diagonals (a function of i - j); added positions do not");
  LinePlot p = kit::line_plot("RoPE score of one (q, k) pair against the offset i - j",
                              "offset i - j", "q . k after rotation");
  p.series = {{"rope (rotate_half), trial 0", m.offsets, m.rope_curve}};
  ctx.figure("rope_score_vs_offset", line_plot_svg(p),
             "The whole score matrix is this one curve, read off along the diagonals");
}

void compare_with_documents(const Deviations& m, int64_t shift, RunContext& ctx) {
  const double eps = std::numeric_limits<float>::epsilon();
  const double rope_worst = std::max(m.worst(Scheme::kRopeHalf), m.worst(Scheme::kRopeInterleaved));
  auto spreads = [&](Scheme s, const std::string& shifted_by, const char* format) {
    return fmt::format(fmt::runtime(fmt::format("diagonal spread {0}, change under a shift{1} {0}",
                                                format, shifted_by)),
                       m.toeplitz.at(s), m.shifted.at(s));
  };
  DocumentComparison cmp("001, 000 §VIII, 004 §3.2 vs ours");
  cmp.add_exact(
      "001: with RoPE, q_i and k_j interact through a rotation by (i - j) theta: the "
      "score depends on the relative position",
      "yes", kit::yes_no(m.worst(Scheme::kRopeHalf) < 1000 * eps),
      spreads(Scheme::kRopeHalf, fmt::format(" by {}", shift), "{:.2e}"));
  cmp.add_exact(
      "004 §3.2: llama's rotary (adjacent channel pairs, the complex form) is relative too", "yes",
      kit::yes_no(m.worst(Scheme::kRopeInterleaved) < 1000 * eps),
      spreads(Scheme::kRopeInterleaved, "", "{:.2e}"));
  cmp.add_exact(
      "000 §VIII: added sinusoids couple content with absolute position (scores are not "
      "relative-only)",
      "yes", kit::yes_no(m.least(Scheme::kSinusoidal) > 1e-2),
      spreads(Scheme::kSinusoidal, "", "{:.3f}"));
  cmp.add_exact(
      "000 §VIII: any absolute encoding added to the embedding (here a learned table) "
      "does not model relative positions by itself",
      "yes", kit::yes_no(m.least(Scheme::kLearned) > 1e-2),
      spreads(Scheme::kLearned, "", "{:.3f}"));
  ctx.result("rope_relative_only", rope_worst < 1000 * eps);
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  const int64_t d = cfg.get_int("head_dim"), n = cfg.get_int("positions");
  const int64_t trials = cfg.get_int("trials"), shift = cfg.get_int("shift_by");
  if (d % 2 != 0)
    throw UsageError(
        fmt::format("rope-relative: --head_dim must be even (RoPE rotates pairs), got {}", d));
  Generator gen(ctx.seed());
  const Deviations m = measure(cfg, gen);
  ctx.section(
      fmt::format("Do the scores depend on i - j alone? head_dim {}, positions 0..{}, {} trials", d,
                  n - 1, trials));
  Table t("Largest deviation, relative to the largest |score| (max over trials)",
          {"scheme", "same content: spread along a diagonal",
           fmt::format("every position + {}", shift)});
  for (Scheme s : kSchemes) {
    t.add_row({scheme_name(s), sci(m.toeplitz.at(s)), sci(m.shifted.at(s))});
    ctx.result("diagonal_spread_" + scheme_key(s), m.toeplitz.at(s));
    ctx.result("shift_change_" + scheme_key(s), m.shifted.at(s));
  }
  ctx.table(t);
  const double eps = std::numeric_limits<float>::epsilon();
  const double rope_worst = std::max(m.worst(Scheme::kRopeHalf), m.worst(Scheme::kRopeInterleaved));
  const double absolute_least = std::min(m.least(Scheme::kSinusoidal), m.least(Scheme::kLearned));
  ctx.result("rope_worst", rope_worst);
  ctx.result("absolute_least", absolute_least);
  ctx.note(fmt::format(
      "RoPE: at most {:.2e} of the score scale in either test, {:.1f} times the float32 rounding "
      "unit ({:.1e}) — the rounding of the rotated vectors, nothing more. Rotating q by i*theta "
      "and k by j*theta leaves q . R((j - i) theta) k. Added positions: at least {:.3f}, because "
      "(q + p_i) . (k + p_j) = q.k + q.p_j + p_i.k + p_i.p_j and the two middle terms follow "
      "the absolute positions. Only p_i.p_j of the sinusoids is relative (sinusoid-shift).",
      rope_worst, rope_worst / eps, eps, absolute_least));
  plot_scores(m, n, ctx);
  compare_with_documents(m, shift, ctx);
}

}  // namespace

Experiment rope_relative() {
  Experiment e;
  e.name = "rope-relative";
  e.source = "001 (Positional encoding), 000 §VIII, 004 §3.2";
  e.purpose = "RoPE scores depend only on i - j (measured); added absolute positions do not";
  e.config.add_int("head_dim", 64, "channels per head (even)", {.min = 2})
      .add_int("positions", 64, "positions 0..N-1", {.min = 2})
      .add_int("trials", 8, "random (q, k) draws", {.min = 1})
      .add_int("shift_by", 1000, "how far every position is moved in the shift test", {.min = 1});
  e.quick = {{"positions", "24"}, {"trials", "2"}, {"head_dim", "32"}};
  e.run = run;
  return e;
}

}  // namespace attn::experiments
