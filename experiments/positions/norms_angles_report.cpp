// norms-angles' summaries, tables and figures (norms_angles_report.h).
#include "experiments/positions/norms_angles_report.h"

#include "experiments/kit/kit.h"

namespace attn::experiments::norms {

namespace {

double median(std::vector<double> xs) {
  std::nth_element(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(xs.size() / 2), xs.end());
  return xs[xs.size() / 2];
}

// Mean over layers and heads of f(head).
template <typename F>
double over_heads(const ModelReading& m, F f) {
  double s = 0, n = 0;
  for (const LayerReading& l : m.layers)
    for (const HeadReading& h : l.heads) s += f(h), n += 1;
  return s / n;
}

// "mean ± sd" over seeds of one number per seed.
template <typename F>
std::string over_seeds(const std::vector<SeedRun>& runs, F f, int precision = 3) {
  return kit::spread_text(kit::spread_over(runs, f), precision);
}

// Fractions per bin of `values` on [lo, hi) in `bins` bins (values outside are dropped).
std::vector<double> fractions(const std::vector<double>& values, double lo, double hi, int bins) {
  std::vector<double> f(static_cast<size_t>(bins), 0.0);
  for (double v : values)
    if (v >= lo && v < hi) f[static_cast<size_t>((v - lo) / (hi - lo) * bins)] += 1;
  for (double& x : f) x /= static_cast<double>(values.size());
  return f;
}

std::vector<double> centres(double lo, double hi, int bins) {
  std::vector<double> c;
  for (int b = 0; b < bins; ++b) c.push_back(lo + (b + 0.5) * (hi - lo) / bins);
  return c;
}

}  // namespace

LayerShift layer_shift(const LayerReading& layer) {
  LayerShift s;
  const auto n = static_cast<double>(layer.heads.size());
  for (const HeadReading& h : layer.heads) {
    s.ks_q += ks_samples(h.q_in, h.q_out) / n;
    s.ks_k += ks_samples(h.k_in, h.k_out) / n;
    s.ks_cos += ks_histograms(h.cos_in, h.cos_far) / n;
  }
  return s;
}

Summaries summarise(const std::vector<SeedRun>& runs) {
  Summaries out;
  for (const SeedRun& r : runs) {
    const ModelReading& m = r.trained;
    SeedSummary s;
    s.accuracy_in = m.accuracy_in, s.accuracy_out = m.accuracy_out;
    s.loss_in = m.loss_in, s.loss_out = m.loss_out;
    s.scored_in = m.scored_in, s.scored_out = m.scored_out;
    const auto layers = static_cast<double>(m.layers.size());
    for (const LayerReading& l : m.layers) {
      const LayerShift shift = layer_shift(l);
      s.ks_q += shift.ks_q / layers, s.ks_k += shift.ks_k / layers;
      s.ks_cos += shift.ks_cos / layers;
      s.tv_norm_only += l.tv_norm_only / layers, s.tv_angle_only += l.tv_angle_only / layers;
      s.far_mass += l.far_mass / layers;
      s.sink.push_back(l.sink), s.recent.push_back(l.recent), s.middle.push_back(l.middle);
      s.tv_uniform.push_back(l.tv_uniform);
    }
    const auto n = static_cast<double>(m.layers[0].heads[0].q_in.size());
    const auto k = static_cast<double>(m.layers[0].heads[0].q_out.size());
    s.ks_norm_noise = 1.36 * std::sqrt((n + k) / (n * k));
    s.entropy_rank_corr = over_heads(m, [](const HeadReading& h) { return h.entropy_rank_corr; });
    auto norm_product = [](const HeadReading& h) {
      return kit::mean_of(h.q_in) * kit::mean_of(h.k_in);
    };
    auto cos_sd = [](const HeadReading& h) { return h.cos_row_sd; };
    s.norm_growth = std::log(over_heads(m, norm_product) / over_heads(r.untrained, norm_product));
    s.angle_growth = std::log(over_heads(m, cos_sd) / over_heads(r.untrained, cos_sd));
    out.push_back(s);
  }
  return out;
}

namespace {

void accuracy_table(const Config& cfg, RunContext& ctx, const std::vector<SeedRun>& runs) {
  const int64_t len = cfg.get_int("train_len");
  const std::vector<int64_t>& starts = runs[0].trained.bucket_starts;
  Table acc("Next-character accuracy by position (mean ± sd over seeds)",
            {"positions", "accuracy"});
  for (size_t b = 0; b < starts.size(); ++b) {
    const int64_t end = b + 1 < starts.size() ? starts[b + 1] : cfg.get_int("eval_len");
    acc.add_row(
        {fmt::format("{}-{}{}", starts[b], end - 1, end <= len ? " (trained)" : ""),
         over_seeds(runs, [&](const SeedRun& r) { return r.trained.accuracy_by_bucket[b]; })});
  }
  ctx.table(acc);
}

// Per layer: the norms and angles inside and beyond the training length, and what selects keys.
void norms_tables(const Config& cfg, RunContext& ctx, const std::vector<SeedRun>& runs) {
  const int64_t len = cfg.get_int("train_len");
  Table shift(
      "Norms and angles inside and beyond the training length (mean over heads, ± sd "
      "over seeds)",
      {"layer", "median |q| in / out", "median |k| in / out", "KS |q|", "KS |k|",
       "KS cos θ (far pairs)", "far mass"});
  Table select("What selects the keys, rows inside the training length",
               {"layer", "TV norms only", "TV angles only", "Spearman(|q|, entropy)",
                "row sd of cos θ untrained → trained", "|q| |k| untrained → trained"});
  for (size_t l = 0; l < runs[0].trained.layers.size(); ++l) {
    // "mean ± sd" over seeds of f(layer l of the trained model).
    auto of_layer = [&](auto f) {
      return over_seeds(runs, [&](const SeedRun& r) { return f(r.trained.layers[l]); });
    };
    // The same of the mean over layer l's heads of f(head), trained or untrained.
    auto of_heads = [&](bool trained, auto f, int precision = 3) {
      return over_seeds(
          runs,
          [&](const SeedRun& r) {
            const LayerReading& layer = (trained ? r.trained : r.untrained).layers[l];
            double s = 0;
            for (const HeadReading& h : layer.heads) s += f(h);
            return s / static_cast<double>(layer.heads.size());
          },
          precision);
    };
    auto med = [&](auto field) {
      return of_heads(true, [&](const HeadReading& h) { return median(h.*field); });
    };
    shift.add_row({std::to_string(l + 1),
                   med(&HeadReading::q_in) + " / " + med(&HeadReading::q_out),
                   med(&HeadReading::k_in) + " / " + med(&HeadReading::k_out),
                   of_layer([](const LayerReading& x) { return layer_shift(x).ks_q; }),
                   of_layer([](const LayerReading& x) { return layer_shift(x).ks_k; }),
                   of_layer([](const LayerReading& x) { return layer_shift(x).ks_cos; }),
                   of_layer([](const LayerReading& x) { return x.far_mass; })});
    auto cos_sd = [](const HeadReading& h) { return h.cos_row_sd; };
    auto norms = [](const HeadReading& h) { return kit::mean_of(h.q_in) * kit::mean_of(h.k_in); };
    select.add_row({std::to_string(l + 1),
                    of_layer([](const LayerReading& x) { return x.tv_norm_only; }),
                    of_layer([](const LayerReading& x) { return x.tv_angle_only; }),
                    of_heads(true, [](const HeadReading& h) { return h.entropy_rank_corr; }),
                    of_heads(false, cos_sd) + " → " + of_heads(true, cos_sd),
                    of_heads(false, norms, 2) + " → " + of_heads(true, norms, 2)});
  }
  ctx.table(shift);
  ctx.note(fmt::format(
      "KS: the Kolmogorov-Smirnov distance (0 = the same distribution, 1 = disjoint) of |q| and "
      "|k| at positions >= {} against positions < {}, and of cos θ over pairs at distances >= {} "
      "against every pair of a row < {} ({:.3f}: what two samples of the norms' sizes differ by "
      "at the 5% level by chance). Far mass: the weight rows >= {} put on keys {} or more "
      "positions back.",
      len, len, len, len, runs.empty() ? 0.0 : summarise({runs[0]})[0].ks_norm_noise, len, len));
  ctx.table(select);
  ctx.note(
      "TV: the total-variation distance from each real attention row to the row rebuilt with one "
      "factor only (norms only: every key at the row's mean cosine; angles only: every key at the "
      "row's mean norm). The smaller TV names the factor that does the selecting. Spearman: the "
      "rank correlation of |q_i| with the row's entropy / log(i + 1) (rows L/2 <= i < L).");
}

void shape_table(const Config& cfg, RunContext& ctx, const Summaries& sums) {
  const int64_t len = cfg.get_int("train_len");

  Table v(
      fmt::format("Attention per key, relative to a uniform row (rows {} to {})", len / 2, len - 1),
      {"layer", "first key (sink)", fmt::format("last {} keys", cfg.get_int("recent")),
       "middle keys", "TV from uniform"});
  for (size_t l = 0; l < sums[0].sink.size(); ++l) {
    // One cell: the seeds' values of layer l, also recorded as <key>_layer<l>.
    auto col = [&](const char* key, const std::vector<double> SeedSummary::*f) {
      const std::vector<double> xs =
          kit::column(sums, [&](const SeedSummary& s) { return (s.*f)[l]; });
      ctx.result(fmt::format("{}_layer{}", key, l + 1), xs);
      return kit::spread_text(kit::spread_of(xs), 2);
    };
    v.add_row({std::to_string(l + 1), col("sink", &SeedSummary::sink),
               col("recent", &SeedSummary::recent), col("middle", &SeedSummary::middle),
               col("tv_uniform", &SeedSummary::tv_uniform)});
  }
  ctx.table(v);
}

}  // namespace

void report_tables(const Config& cfg,
                   RunContext& ctx,
                   const std::vector<SeedRun>& runs,
                   const Summaries& sums) {
  accuracy_table(cfg, ctx, runs);
  norms_tables(cfg, ctx, runs);
  shape_table(cfg, ctx, sums);
  kit::record(ctx, {{"accuracy_in", kit::column(sums, &SeedSummary::accuracy_in)},
                    {"accuracy_out", kit::column(sums, &SeedSummary::accuracy_out)},
                    {"loss_in", kit::column(sums, &SeedSummary::loss_in)},
                    {"loss_out", kit::column(sums, &SeedSummary::loss_out)},
                    {"ks_q", kit::column(sums, &SeedSummary::ks_q)},
                    {"ks_k", kit::column(sums, &SeedSummary::ks_k)},
                    {"ks_cos", kit::column(sums, &SeedSummary::ks_cos)},
                    {"tv_norm_only", kit::column(sums, &SeedSummary::tv_norm_only)},
                    {"tv_angle_only", kit::column(sums, &SeedSummary::tv_angle_only)},
                    {"far_mass", kit::column(sums, &SeedSummary::far_mass)},
                    {"ks_norm_noise", sums[0].ks_norm_noise},
                    {"entropy_rank_corr", kit::column(sums, &SeedSummary::entropy_rank_corr)},
                    {"norm_growth", kit::column(sums, &SeedSummary::norm_growth)},
                    {"angle_growth", kit::column(sums, &SeedSummary::angle_growth)}});
}

void report_figures(const Config& cfg, RunContext& ctx, const std::vector<SeedRun>& runs) {
  const auto len = static_cast<double>(cfg.get_int("train_len"));
  const ModelReading& first = runs[0].trained;
  LinePlot acc = kit::line_plot("Next-character accuracy by position", "positions up to",
                                "accuracy", kit::Axes::kLogX);
  for (size_t s = 0; s < runs.size(); ++s) {
    Series line{fmt::format("seed {}", s + 1), {}, runs[s].trained.accuracy_by_bucket};
    const std::vector<int64_t>& st = runs[s].trained.bucket_starts;
    for (size_t b = 0; b < st.size(); ++b)
      line.x.push_back(
          static_cast<double>(b + 1 < st.size() ? st[b + 1] : cfg.get_int("eval_len")));
    acc.series.push_back(line);
  }
  acc.refs = {{RefLine::kVertical, len, "training length"}};
  ctx.figure("accuracy_by_position", line_plot_svg(acc),
             "Accuracy over each span of positions (0 to the training length, then doubling)");

  // Norms pooled over layers and heads, each head's values over its median inside.
  std::vector<double> q_in, q_out, k_in, k_out;
  for (const LayerReading& l : first.layers)
    for (const HeadReading& h : l.heads) {
      const double mq = median(h.q_in), mk = median(h.k_in);
      for (double x : h.q_in) q_in.push_back(x / mq);
      for (double x : h.q_out) q_out.push_back(x / mq);
      for (double x : h.k_in) k_in.push_back(x / mk);
      for (double x : h.k_out) k_out.push_back(x / mk);
    }
  LinePlot np = kit::line_plot("|q| and |k| inside and beyond the training length (seed 1)",
                               "norm / the head's median inside", "share of positions");
  const std::vector<double> x = centres(0, 3, 30);
  np.series = {{"|q| inside", x, fractions(q_in, 0, 3, 30)},
               {"|q| beyond", x, fractions(q_out, 0, 3, 30), "", true},
               {"|k| inside", x, fractions(k_in, 0, 3, 30)},
               {"|k| beyond", x, fractions(k_out, 0, 3, 30), "", true}};
  ctx.figure("norm_distributions", line_plot_svg(np),
             "Every layer and head pooled; dashed: positions the training windows never held");

  constexpr int kGroup = 5;  // 200 cos bins read as 40
  std::vector<double> in(kCosBins / kGroup, 0), far(kCosBins / kGroup, 0);
  double n_in = 0, n_far = 0;
  for (const LayerReading& l : first.layers)
    for (const HeadReading& h : l.heads)
      for (int b = 0; b < kCosBins; ++b)
        in[b / kGroup] += h.cos_in[b], far[b / kGroup] += h.cos_far[b], n_in += h.cos_in[b],
            n_far += h.cos_far[b];
  for (double& f : in) f /= n_in;
  for (double& f : far) f /= std::max(1.0, n_far);
  LinePlot ap = kit::line_plot("cos θ of trained pairs and of pairs farther than training (seed 1)",
                               "cos θ between q_i and k_j", "share of pairs");
  const std::vector<double> xc = centres(-1, 1, kCosBins / kGroup);
  ap.series = {{"rows inside (every trained pair)", xc, in},
               {fmt::format("distance >= {}", cfg.get_int("train_len")), xc, far, "", true}};
  ctx.figure("angle_distributions", line_plot_svg(ap),
             "Every layer and head pooled; dashed: pairs at distances no training window held");

  LinePlot rel = kit::line_plot("Attention by relative key position (mean over seeds)",
                                "key position j / (i + 1)", "weight per key / uniform");
  const size_t bins = first.layers[0].by_relative.size();
  for (size_t l = 0; l < first.layers.size(); ++l) {
    Series s{fmt::format("layer {}", l + 1), centres(0, 1, static_cast<int>(bins)),
             std::vector<double>(bins, 0.0)};
    for (const SeedRun& r : runs)
      for (size_t b = 0; b < bins; ++b)
        s.y[b] += r.trained.layers[l].by_relative[b] / static_cast<double>(runs.size());
    rel.series.push_back(s);
  }
  rel.refs = {{RefLine::kHorizontal, 1.0, "uniform"}};
  ctx.figure("attention_by_relative_position", line_plot_svg(rel),
             fmt::format("Rows {} to {}; a V: high at both ends, low between",
                         cfg.get_int("train_len") / 2, cfg.get_int("train_len") - 1));
}

}  // namespace attn::experiments::norms
