#include "experiments/common/hippo_study.h"

#include "experiments/common/hippo.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// Scaled to unit RMS, so every RMSE reads as a fraction of the signal's size.
std::vector<double> unit_rms(std::vector<double> v) {
  double s = 0;
  for (double x : v) s += x * x;
  const double r = std::sqrt(s / static_cast<double>(v.size()));
  for (double& x : v) x /= r;
  return v;
}

// Smooth: white noise blurred by a Gaussian of width `width` samples (computed on a padded range
// so the ends are as smooth as the middle).
std::vector<double> smooth_signal(int64_t length, double width, Generator& gen) {
  const auto pad = static_cast<int64_t>(std::ceil(4 * width));
  std::vector<double> noise(static_cast<size_t>(length + 2 * pad));
  for (double& x : noise) x = gen.normal();
  std::vector<double> f(static_cast<size_t>(length), 0.0);
  for (int64_t i = 0; i < length; ++i)
    for (int64_t j = -pad; j <= pad; ++j)
      f[static_cast<size_t>(i)] += std::exp(-0.5 * static_cast<double>(j * j) / (width * width)) *
                                   noise[static_cast<size_t>(i + j + pad)];
  return unit_rms(f);
}

// Band-limited: sum over j = 1 .. cycles of a_j cos(2 pi j u) + b_j sin(2 pi j u), u = s / L,
// a_j, b_j ~ N(0,1): a flat spectrum up to `cycles` periods over the history, nothing above.
std::vector<double> band_limited_signal(int64_t length, int64_t cycles, Generator& gen) {
  std::vector<double> f(static_cast<size_t>(length), 0.0);
  for (int64_t j = 1; j <= cycles; ++j) {
    const double a = gen.normal(), b = gen.normal();
    for (int64_t k = 0; k < length; ++k) {
      const double angle = 2 * M_PI * static_cast<double>(j) * (static_cast<double>(k) + 0.5) /
                           static_cast<double>(length);
      f[static_cast<size_t>(k)] += a * std::cos(angle) + b * std::sin(angle);
    }
  }
  return unit_rms(f);
}

// The first band-limited signal, reconstructed from the middle and the largest N.
struct Example {
  std::vector<double> signal, reconstructed[2];
};

// The mean RMSEs of every N over `trials` random signals of each kind, drawn from `seed`.
HippoStudy measure(const Config& cfg, uint64_t seed, Example& ex) {
  const std::vector<int64_t> ns = cfg.get_ints("hippo_n");
  const int64_t length = cfg.get_int("hippo_length"), trials = cfg.get_int("hippo_trials");
  HippoStudy r;
  for (int64_t n : ns) r.ns.push_back(static_cast<double>(n));
  Generator gen(seed);
  for (int kind = 0; kind < 2; ++kind) {
    r.online[kind].assign(ns.size(), 0.0);
    r.optimal[kind].assign(ns.size(), 0.0);
    r.gap[kind].assign(ns.size(), 0.0);
    for (int64_t trial = 0; trial < trials; ++trial) {
      const std::vector<double> f =
          kind == 0 ? smooth_signal(length,
                                    cfg.get_real("smooth_width") * static_cast<double>(length), gen)
                    : band_limited_signal(length, cfg.get_int("band_cycles"), gen);
      for (size_t i = 0; i < ns.size(); ++i) {
        const std::vector<double> online = legs_reconstruct(legs_online(f, ns[i]), length);
        const std::vector<double> best = legs_reconstruct(legs_best_fit(f, ns[i]), length);
        const auto share = 1.0 / static_cast<double>(trials);
        r.online[kind][i] += share * rmse(online, f);
        r.optimal[kind][i] += share * rmse(best, f);
        r.gap[kind][i] += share * rmse(online, best);
      }
      if (kind == 1 && trial == 0) {
        ex.signal = f;
        ex.reconstructed[0] = legs_reconstruct(legs_online(f, ns[ns.size() / 2]), length);
        ex.reconstructed[1] = legs_reconstruct(legs_online(f, ns.back()), length);
      }
    }
    for (size_t i = 1; i < ns.size(); ++i)
      r.falls[kind] = r.falls[kind] && r.online[kind][i] < r.online[kind][i - 1];
    for (double g : r.gap[kind]) r.worst_gap = std::max(r.worst_gap, g);
  }
  return r;
}

// The error against N, and the example history with its reconstructions.
void figures(const HippoStudy& r,
             const Example& ex,
             const std::vector<int64_t>& ns,
             RunContext& ctx) {
  LinePlot p = kit::line_plot("HiPPO-LegS: error of the reconstructed history against state size N",
                              "state size N", "RMSE (signal RMS = 1)", kit::Axes::kLogLog);
  p.series = {{"smooth, online", r.ns, r.online[0]},
              {"smooth, optimal", r.ns, r.optimal[0], "", true},
              {"band-limited, online", r.ns, r.online[1]},
              {"band-limited, optimal", r.ns, r.optimal[1], "", true}};
  ctx.figure("hippo_error", line_plot_svg(p), "Reconstruction error against N, log-log");

  std::vector<double> xs;
  for (size_t k = 0; k < ex.signal.size(); ++k) xs.push_back(static_cast<double>(k) + 0.5);
  LinePlot e = kit::line_plot("A band-limited signal and its reconstructions from the final memory",
                              "time s", "f(s)");
  const int64_t n_mid = ns[ns.size() / 2];
  e.series = {{"signal", xs, ex.signal, "", false, false},
              {fmt::format("N = {}", n_mid), xs, ex.reconstructed[0], "", true, false},
              {fmt::format("N = {}", ns.back()), xs, ex.reconstructed[1], "", true, false}};
  ctx.figure("hippo_reconstruction", line_plot_svg(e),
             "One band-limited history and what N coefficients give back");
}

}  // namespace

HippoStudy hippo_study(const Config& cfg, RunContext& ctx) {
  const std::vector<int64_t> ns = cfg.get_ints("hippo_n");
  ctx.section(fmt::format(
      "Part 1: HiPPO-LegS, the history of {} samples from N coefficients ({} signals per kind)",
      cfg.get_int("hippo_length"), cfg.get_int("hippo_trials")));
  Example ex;
  const HippoStudy r = measure(cfg, ctx.seed() + 101, ex);
  Table t(
      "Reconstruction RMSE of the whole history (signals of unit RMS), mean over signals",
      {"N", "smooth: online", "smooth: optimal", "band-limited: online", "band-limited: optimal"});
  CsvWriter csv =
      ctx.csv("hippo", {"N", "smooth_online", "smooth_optimal", "band_online", "band_optimal"});
  for (size_t i = 0; i < ns.size(); ++i) {
    t.add_row({std::to_string(ns[i]), fmt::format("{:.3g}", r.online[0][i]),
               fmt::format("{:.3g}", r.optimal[0][i]), fmt::format("{:.3g}", r.online[1][i]),
               fmt::format("{:.3g}", r.optimal[1][i])});
    csv.row({r.ns[i], r.online[0][i], r.optimal[0][i], r.online[1][i], r.optimal[1][i]});
  }
  ctx.table(t);
  ctx.result("hippo_n", ns);
  ctx.result("hippo_rmse_smooth", r.online[0]);
  ctx.result("hippo_rmse_smooth_optimal", r.optimal[0]);
  ctx.result("hippo_rmse_band", r.online[1]);
  ctx.result("hippo_rmse_band_optimal", r.optimal[1]);
  ctx.result("hippo_gap_smooth", r.gap[0]);
  ctx.result("hippo_gap_band", r.gap[1]);
  ctx.result("hippo_worst_gap", r.worst_gap);
  ctx.note(fmt::format(
      "From N = {} to N = {} the error falls from {:.3g} to {:.3g} (smooth) and from {:.3g} to "
      "{:.3g} (band-limited: {} periods over the history, so about {:.0f} Legendre functions are "
      "needed before it drops). The online memory, which reads one sample at a time and never "
      "stores the signal, ends where the offline least-squares fit does: the two "
      "reconstructions differ by at most {:.2g} (RMSE), the bilinear step's discretisation "
      "error, which sets the floor of the online error once the fit is near exact.",
      ns.front(), ns.back(), r.online[0].front(), r.online[0].back(), r.online[1].front(),
      r.online[1].back(), cfg.get_int("band_cycles"),
      M_PI * static_cast<double>(cfg.get_int("band_cycles")), r.worst_gap));
  figures(r, ex, ns, ctx);
  return r;
}

}  // namespace attn::experiments
