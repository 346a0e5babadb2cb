// norms-angles' rows: 004 §2.3 (the score as |q| |k| cos θ, norms against angles, extrapolation)
// and 004 §4.1 (uniform first layer, V-shaped middle layers). Every row is decided by the sign
// of one number per seed; it is judged only when the seeds' mean lies more than three standard
// errors (3 sd / sqrt(seeds)) from 0, and only for models that beat the most-frequent-character
// guess at the training length.
#include "experiments/kit/kit.h"
#include "experiments/positions/norms_angles_report.h"

namespace attn::experiments::norms {

namespace {

// The noise of a mean over seeds: three standard errors.
double three_se(const kit::Spread& s, size_t n) {
  return 3 * s.sd / std::sqrt(static_cast<double>(n));
}

// A row whose answer is "yes" when the per-seed numbers xs are positive on average; `floor` is
// a noise the seeds' spread does not show (a rate's sampling error).
Comparison& sign_row(DocumentComparison& cmp,
                     const std::string& name,
                     const std::vector<double>& xs,
                     const std::string& reason,
                     double floor = 0) {
  const kit::Spread s = kit::spread_of(xs);
  const double tol = std::max(three_se(s, xs.size()), floor);
  return cmp.add_exact(name, "yes", kit::yes_no(s.mean > 0), reason)
      .not_judged_if(xs.size() < 2, "one seed: no spread")
      .not_judged_if(
          std::abs(s.mean) <= tol,
          fmt::format("the seeds' mean {:+.3f} is within its noise ({:.3f}) of 0", s.mean, tol));
}

void norms_rows(const Config& cfg, RunContext& ctx, const Summaries& sums, double needed) {
  const int64_t len = cfg.get_int("train_len");
  DocumentComparison cmp(
      fmt::format("004 §2.3: q.k = |q| |k| cos θ vs ours (trained on {}, read on {}, {} seeds)",
                  len, cfg.get_int("eval_len"), sums.size()));
  const double acc = kit::mean_of(kit::column(sums, &SeedSummary::accuracy_in));
  const kit::Spread tv_n = kit::spread_of(kit::column(sums, &SeedSummary::tv_norm_only));
  const kit::Spread tv_a = kit::spread_of(kit::column(sums, &SeedSummary::tv_angle_only));
  const kit::Spread growth_n = kit::spread_of(kit::column(sums, &SeedSummary::norm_growth));
  const kit::Spread growth_a = kit::spread_of(kit::column(sums, &SeedSummary::angle_growth));
  sign_row(cmp, "|q_i| only sharpens row i: a longer query, a lower entropy (rank correlation < 0)",
           kit::column(sums, [](const SeedSummary& s) { return -s.entropy_rank_corr; }),
           fmt::format("rank correlation of |q_i| with the row's entropy {:+.3f}",
                       kit::mean_of(kit::column(sums, &SeedSummary::entropy_rank_corr))))
      .needs_training(acc, needed);
  sign_row(cmp,
           "training raises the norms more than it spreads the angles (|q| |k| against the "
           "row sd of cos θ, log growth)",
           kit::column(sums, [](const SeedSummary& s) { return s.norm_growth - s.angle_growth; }),
           fmt::format("|q| |k| grew x{:.2f}, the within-row sd of cos θ x{:.2f}",
                       std::exp(growth_n.mean), std::exp(growth_a.mean)))
      .needs_training(acc, needed);
  sign_row(cmp,
           "the norms select the keys: |k| alone rebuilds the rows closer than cos θ alone "
           "(total variation)",
           kit::column(sums, [](const SeedSummary& s) { return s.tv_angle_only - s.tv_norm_only; }),
           fmt::format("angles alone miss the real rows by TV {:.3f}, norms alone by {:.3f}: the "
                       "angle is what picks the key",
                       tv_a.mean, tv_n.mean))
      .needs_training(acc, needed);

  const std::vector<double> drops =
      kit::column(sums, [](const SeedSummary& s) { return s.accuracy_in - s.accuracy_out; });
  const kit::Spread drop = kit::spread_of(drops);
  const double rate_noise =
      3 * kit::rate_difference_se(acc, kit::mean_of(kit::column(sums, &SeedSummary::accuracy_out)),
                                  static_cast<double>(sums[0].scored_in));
  const bool failed = drop.mean > std::max(three_se(drop, drops.size()), rate_noise);
  sign_row(cmp, fmt::format("attention fails to extrapolate: accuracy beyond {} below inside", len),
           drops,
           fmt::format("accuracy {:.3f} inside, {:.3f} beyond", acc,
                       kit::mean_of(kit::column(sums, &SeedSummary::accuracy_out))),
           rate_noise)
      .needs_training(acc, needed);
  const kit::Spread ks_cos = kit::spread_of(kit::column(sums, &SeedSummary::ks_cos));
  sign_row(
      cmp,
      "beyond the training length the angles leave their trained distribution more than "
      "the norms (KS of cos θ at untrained distances against |q| and |k|)",
      kit::column(sums, [](const SeedSummary& s) { return s.ks_cos - std::max(s.ks_q, s.ks_k); }),
      fmt::format("KS cos θ {:.3f}, |q| {:.3f}, |k| {:.3f} (chance "
                  "alone gives the norms up to {:.3f}); far pairs' cosines are spread like "
                  "trained ones, and the far keys draw {:.2f} of each row beyond {}",
                  ks_cos.mean, kit::mean_of(kit::column(sums, &SeedSummary::ks_q)),
                  kit::mean_of(kit::column(sums, &SeedSummary::ks_k)), sums[0].ks_norm_noise,
                  kit::mean_of(kit::column(sums, &SeedSummary::far_mass)), len))
      .needs_training(acc, needed)
      .not_judged_if(!failed, "extrapolation did not fail: nothing to explain");
  ctx.compare(cmp);
}

void shape_rows(const Config& cfg, RunContext& ctx, const Summaries& sums, double needed) {
  const int64_t len = cfg.get_int("train_len"), recent = cfg.get_int("recent");
  const size_t layers = sums[0].sink.size();
  DocumentComparison cmp(
      fmt::format("004 §4.1: attention by layer vs ours (rows {} to {}, {} seeds)", len / 2,
                  len - 1, sums.size()));
  const double acc = kit::mean_of(kit::column(sums, &SeedSummary::accuracy_in));
  sign_row(cmp, "the first layer attends most uniformly (smallest TV from a uniform row)",
           kit::column(sums,
                       [&](const SeedSummary& s) {
                         double others = s.tv_uniform[1];
                         for (size_t l = 2; l < layers; ++l)
                           others = std::min(others, s.tv_uniform[l]);
                         return others - s.tv_uniform[0];
                       }),
           fmt::format("TV from uniform, layer 1: {:.3f}",
                       kit::mean_of(kit::column(
                           sums, [](const SeedSummary& s) { return s.tv_uniform[0]; }))))
      .needs_training(acc, needed);
  for (size_t l = 1; l + 1 < layers; ++l) {
    const std::vector<double> sink =
        kit::column(sums, [&](const SeedSummary& s) { return s.sink[l] - s.middle[l]; });
    const std::vector<double> late =
        kit::column(sums, [&](const SeedSummary& s) { return s.recent[l] - s.middle[l]; });
    const kit::Spread a = kit::spread_of(sink), b = kit::spread_of(late);
    const double ta = three_se(a, sink.size()), tb = three_se(b, late.size());
    const bool clearly_no = a.mean < -ta || b.mean < -tb;
    const bool clearly_yes = a.mean > ta && b.mean > tb;
    const double mid =
        kit::mean_of(kit::column(sums, [&](const SeedSummary& s) { return s.middle[l]; }));
    cmp.add_exact(fmt::format("layer {} (middle): a V, the first key and the last {} keys above "
                              "the middle ones (per key)",
                              l + 1, recent),
                  "yes", kit::yes_no(a.mean > 0 && b.mean > 0),
                  fmt::format("per key, relative to uniform: first {:.2f}, last {} {:.2f}, "
                              "middle {:.2f}",
                              a.mean + mid, recent, b.mean + mid, mid))
        .not_judged_if(sums.size() < 2, "one seed: no spread")
        .not_judged_if(!clearly_no && !clearly_yes,
                       "a difference from the middle keys is within three standard errors")
        .needs_training(acc, needed);
  }
  ctx.compare(cmp);
}

}  // namespace

void compare(const Config& cfg, RunContext& ctx, const Summaries& sums, double unigram_accuracy) {
  // A model that learned context beats the most frequent character by more than five standard
  // errors of a rate over the scored positions inside the training length.
  const double needed =
      unigram_accuracy + 5 * 0.5 / std::sqrt(static_cast<double>(sums[0].scored_in));
  norms_rows(cfg, ctx, sums, needed);
  shape_rows(cfg, ctx, sums, needed);
}

}  // namespace attn::experiments::norms
