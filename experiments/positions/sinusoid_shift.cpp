// sinusoid-shift [000 §VIII, 001 "Positional encoding", 003 "The transformer architecture"]:
// the sinusoidal table of 2017 moves by a fixed rotation. PE(pos + k) = M_k PE(pos) with M_k
// block-diagonal: one 2x2 rotation by k * w_i per (sin, cos) column pair, the same for every pos.
//
//   attnlab run sinusoid-shift
//   attnlab run sinusoid-shift --d_model 128 --positions 1024 --shifts 1,3,100
//
// What is measured, on the project's own float table (nn::sinusoidal_table):
//  1. the table against the formula, computed again here in double;
//  2. for each shift k, M_k FITTED by least squares over all positions (each 2x2 block from its
//     column pair), the relative residual |PE[p+k] - M_k PE[p]| / |PE[p+k]| over the table, the
//     largest entry difference from the analytic rotation [[cos kw, sin kw], [-sin kw, cos kw]],
//     and fits on the first and the second half of the positions compared (the map is fixed);
//     the same fit on a random table (what an untrained learned table looks like) as the control;
//  3. the dot product PE(i) . PE(j) = sum_i cos(w_i (i - j)): a function of the distance alone.
//  2b. the same with NO form assumed: any d x d matrix, by Householder least squares
//     (experiments/common/least_squares.h); the fast columns come out block-diagonal, the slow
//     ones are too nearly collinear over the positions for the fit to decide.
// Step through: attn::nn::sinusoidal_table, then fit_block and fit_full below.
#include <array>

#include "experiments/common/least_squares.h"
#include "experiments/common/offset_spread.h"
#include "experiments/kit/kit.h"
#include "nn/positional/sinusoidal.h"

namespace attn::experiments {

namespace {

using Block = std::array<double, 4>;  // row-major 2x2: [a b; c d]

// Least squares over positions p in [lo, hi): the 2x2 M minimising sum |y_p - M x_p|^2, where
// x_p = (table[p, 2i], table[p, 2i+1]) and y_p the same row shifted by k. With X, Y the stacked
// rows, M = (Y^T X)(X^T X)^{-1} (the normal equations of a 2-column problem).
Block fit_block(const Tensor& table, int64_t i, int64_t k, int64_t lo, int64_t hi) {
  const int64_t d = table.size(1);
  double xx[4] = {0, 0, 0, 0}, yx[4] = {0, 0, 0, 0};
  for (int64_t p = lo; p < hi; ++p) {
    const double x0 = table[p * d + 2 * i], x1 = table[p * d + 2 * i + 1];
    const double y0 = table[(p + k) * d + 2 * i], y1 = table[(p + k) * d + 2 * i + 1];
    xx[0] += x0 * x0, xx[1] += x0 * x1, xx[2] += x1 * x0, xx[3] += x1 * x1;
    yx[0] += y0 * x0, yx[1] += y0 * x1, yx[2] += y1 * x0, yx[3] += y1 * x1;
  }
  const double det = xx[0] * xx[3] - xx[1] * xx[2];
  const double inv[4] = {xx[3] / det, -xx[1] / det, -xx[2] / det, xx[0] / det};
  return {yx[0] * inv[0] + yx[1] * inv[2], yx[0] * inv[1] + yx[1] * inv[3],
          yx[2] * inv[0] + yx[3] * inv[2], yx[2] * inv[1] + yx[3] * inv[3]};
}

// The frequency of column pair i: w_i = 10000^(-2i/d).
double frequency(int64_t i, int64_t d) {
  return std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(d));
}

// sin(w (p+k)) = sin(wp) cos(wk) + cos(wp) sin(wk); cos(w (p+k)) = cos(wp) cos(wk) - sin(wp)
// sin(wk): a rotation of the pair (sin, cos) by the angle w k.
Block rotation(double w, int64_t k) {
  const double c = std::cos(w * static_cast<double>(k)), s = std::sin(w * static_cast<double>(k));
  return {c, s, -s, c};
}

// sqrt(sum_p |y_p - M x_p|^2 / sum_p |y_p|^2) over positions [0, n), every column pair with its
// own block (an odd last column, a lone sine, is left out).
double relative_residual(const Tensor& table,
                         const std::vector<Block>& blocks,
                         int64_t k,
                         int64_t n) {
  const int64_t d = table.size(1);
  double err = 0, norm = 0;
  for (int64_t p = 0; p < n; ++p)
    for (size_t i = 0; i < blocks.size(); ++i) {
      const Block& m = blocks[i];
      const double x0 = table[p * d + 2 * i], x1 = table[p * d + 2 * i + 1];
      const double y0 = table[(p + k) * d + 2 * i], y1 = table[(p + k) * d + 2 * i + 1];
      const double e0 = y0 - (m[0] * x0 + m[1] * x1), e1 = y1 - (m[2] * x0 + m[3] * x1);
      err += e0 * e0 + e1 * e1;
      norm += y0 * y0 + y1 * y1;
    }
  return std::sqrt(err / norm);
}

double max_entry_diff(const std::vector<Block>& a, const std::vector<Block>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (int e = 0; e < 4; ++e) m = std::max(m, std::abs(a[i][e] - b[i][e]));
  return m;
}

struct ShiftFit {
  double residual, analytic_residual, vs_analytic, halves, control_residual;
};

ShiftFit fit_shift(const Tensor& table, const Tensor& control, int64_t k, int64_t n) {
  const int64_t d = table.size(1), pairs = d / 2;
  ShiftFit f;
  std::vector<Block> fitted, analytic, first, second, ctrl;
  for (int64_t i = 0; i < pairs; ++i) {
    fitted.push_back(fit_block(table, i, k, 0, n));
    analytic.push_back(rotation(frequency(i, d), k));
    first.push_back(fit_block(table, i, k, 0, n / 2));
    second.push_back(fit_block(table, i, k, n / 2, n));
    ctrl.push_back(fit_block(control, i, k, 0, n));
  }
  f.residual = relative_residual(table, fitted, k, n);
  f.analytic_residual = relative_residual(table, analytic, k, n);
  f.vs_analytic = max_entry_diff(fitted, analytic);
  f.halves = max_entry_diff(first, second);
  f.control_residual = relative_residual(control, ctrl, k, n);
  return f;
}

// The unconstrained fit: any d x d matrix M with PE[p+k] ~ M PE[p] over p in [0, n).
struct FullFit {
  std::vector<double> m;  // (d,d) row-major: row = column of PE(pos+k), col = column of PE(pos)
  double residual = 0;    // relative, as relative_residual
  double fast_offblock = 0, fast_vs_analytic = 0;  // over the first `fast` rows and columns
  double offblock = 0;                             // over the whole matrix
  double conditioning = 0;                         // max |R_ii| / min |R_ii| of the QR
};

FullFit fit_full(const Tensor& table, int64_t k, int64_t n, int64_t fast) {
  const int64_t d = table.size(1);
  std::vector<double> x(static_cast<size_t>(n * d)), y(static_cast<size_t>(n * d));
  for (int64_t p = 0; p < n; ++p)
    for (int64_t c = 0; c < d; ++c)
      x[p * d + c] = table[p * d + c], y[p * d + c] = table[(p + k) * d + c];
  // X M^T = Y: the least-squares solution is M^T.
  const LeastSquares ls = least_squares(x, y, n, d, d);
  FullFit f;
  f.conditioning = ls.r_diagonal_ratio;
  f.m.resize(static_cast<size_t>(d * d));
  for (int64_t r = 0; r < d; ++r)
    for (int64_t c = 0; c < d; ++c) f.m[r * d + c] = ls.x[c * d + r];
  double err = 0, norm = 0;
  for (int64_t p = 0; p < n; ++p)
    for (int64_t r = 0; r < d; ++r) {
      double pred = 0;
      for (int64_t c = 0; c < d; ++c) pred += f.m[r * d + c] * x[p * d + c];
      err += (y[p * d + r] - pred) * (y[p * d + r] - pred);
      norm += y[p * d + r] * y[p * d + r];
    }
  f.residual = std::sqrt(err / norm);
  for (int64_t r = 0; r < d; ++r)
    for (int64_t c = 0; c < d; ++c) {
      const bool block = r / 2 == c / 2;
      const double v = f.m[r * d + c];
      if (!block) f.offblock = std::max(f.offblock, std::abs(v));
      if (r >= fast || c >= fast) continue;
      if (!block) {
        f.fast_offblock = std::max(f.fast_offblock, std::abs(v));
      } else {
        const Block rot = rotation(frequency(r / 2, d), k);
        f.fast_vs_analytic = std::max(f.fast_vs_analytic, std::abs(v - rot[(r % 2) * 2 + c % 2]));
      }
    }
  return f;
}

// The leading n x n block of a row-major matrix with `stride` columns, as a tensor to draw.
Tensor leading_block(const std::vector<double>& m, int64_t stride, int64_t n) {
  Tensor out({n, n});
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < n; ++c) out.at({r, c}) = static_cast<real>(m[r * stride + c]);
  return out;
}

// ---- 2. the shift is a fixed rotation: one 2x2 block per column pair ----
// Returns each measure at its worst over the shifts (the control at its best).
ShiftFit report_block_fits(const Tensor& pe,
                           const Tensor& control,
                           const std::vector<int64_t>& shifts,
                           int64_t n,
                           RunContext& ctx) {
  Table t("Least-squares fit of M_k (one 2x2 block per column pair) over all positions",
          {"k", "relative residual, fitted M_k", "same, analytic rotation",
           "max |fitted - analytic| entry", "max |first half - second half| fit",
           "control: random table residual"});
  std::vector<ShiftFit> fits;
  for (int64_t k : shifts) {
    const ShiftFit& f = fits.emplace_back(fit_shift(pe, control, k, n));
    t.add_row({std::to_string(k), sci(f.residual), sci(f.analytic_residual), sci(f.vs_analytic),
               sci(f.halves), fixed(f.control_residual, 3)});
  }
  ctx.table(t);
  const ShiftFit worst{
      kit::max_of(fits, &ShiftFit::residual), kit::max_of(fits, &ShiftFit::analytic_residual),
      kit::max_of(fits, &ShiftFit::vs_analytic), kit::max_of(fits, &ShiftFit::halves),
      kit::min_of(fits, &ShiftFit::control_residual)};
  const double eps = std::numeric_limits<float>::epsilon();
  ctx.note(fmt::format(
      "The table is stored in float32, whose relative rounding is {:.1e}; the worst fitted "
      "residual, {:.2e}, is {:.1f} of those units, and the analytic rotation does as well "
      "({:.2e}). The fitted blocks differ from the analytic rotation by at most {:.2e} and "
      "fits on the two halves of the positions by at most {:.2e}: one map serves every "
      "position. The same fit on a random table leaves at least {:.3f} of it unexplained: the "
      "property belongs to the sinusoids, not to the fitting.",
      eps, worst.residual, worst.residual / eps, worst.analytic_residual, worst.vs_analytic,
      worst.halves, worst.control_residual));
  kit::record(ctx, {{"shifts", shifts},
                    {"fit_residual", kit::column(fits, &ShiftFit::residual)},
                    {"fit_residual_max", worst.residual},
                    {"analytic_residual_max", worst.analytic_residual},
                    {"fit_vs_analytic_max", worst.vs_analytic},
                    {"halves_max_diff", worst.halves},
                    {"control_residual", kit::column(fits, &ShiftFit::control_residual)},
                    {"control_residual_min", worst.control_residual}});
  return worst;
}

// ---- 2b. no form assumed: any d x d matrix; returns the worst relative residual ----
double report_full_fits(const Tensor& pe,
                        const std::vector<int64_t>& shifts,
                        int64_t n,
                        RunContext& ctx) {
  const int64_t d = pe.size(1);
  // The "fast" column pairs: those whose sine runs through at least kFastPeriods whole periods
  // over the positions (w_i n >= 2 pi kFastPeriods), so that no mix of the other columns
  // imitates it.
  constexpr int64_t kFastPeriods = 4;
  int64_t fast = 2;
  for (int64_t i = 1; i < d / 2; ++i)
    if (frequency(i, d) * static_cast<double>(n) >= 2 * M_PI * kFastPeriods) fast = 2 * (i + 1);
  Table ft(fmt::format("Unconstrained least-squares fit of M_k: any {0} x {0} matrix", d),
           {"k", "relative residual", fmt::format("off-block max, first {} columns", fast),
            fmt::format("max |fitted - rotation|, first {} columns", fast), "off-block max, all",
            "QR conditioning max|R_ii|/min|R_ii|"});
  std::vector<FullFit> fits;
  for (int64_t k : shifts) {
    const FullFit& f = fits.emplace_back(fit_full(pe, k, n, fast));
    ft.add_row({std::to_string(k), sci(f.residual), sci(f.fast_offblock), sci(f.fast_vs_analytic),
                sci(f.offblock), sci(f.conditioning, 1)});
  }
  ctx.table(ft);
  const double worst = kit::max_of(fits, &FullFit::residual),
               fast_offblock = kit::max_of(fits, &FullFit::fast_offblock),
               fast_vs = kit::max_of(fits, &FullFit::fast_vs_analytic),
               all_offblock = kit::max_of(fits, &FullFit::offblock),
               conditioning = kit::max_of(fits, &FullFit::conditioning);
  ctx.note(fmt::format(
      "Without assuming the block form, the best d x d map still leaves only {:.2e} of the table "
      "unexplained, and in the first {} columns (the pairs whose sine turns at least {} times over "
      "the positions) it is the block-diagonal rotation: off-block entries at most {:.2e}, blocks "
      "within {:.2e} of the analytic ones. In the slow columns the fit cannot decide: over {} "
      "positions a slow sine is almost a straight line, several of them are nearly proportional "
      "(QR conditioning up to {:.1e}), and maps with off-block entries as large as {:.2e} fit "
      "as well. The block form is then the natural choice, and the per-block fit above pins it "
      "to the rotation.",
      worst, fast, kFastPeriods, fast_offblock, fast_vs, n, conditioning, all_offblock));
  kit::record(ctx, {{"full_fit_residual_max", worst},
                    {"full_fit_fast_offblock_max", fast_offblock},
                    {"full_fit_fast_vs_analytic_max", fast_vs},
                    {"full_fit_offblock_max", all_offblock},
                    {"full_fit_conditioning", conditioning}});
  const int64_t show = std::min<int64_t>(fast, 16);
  const Heatmap hm{.values = leading_block(fits.front().m, d, show),
                   .title = fmt::format("Unconstrained fit of M_{} (first {} of {} columns)",
                                        shifts.front(), show, d),
                   .x_label = "column of PE(pos)",
                   .y_label = "column of PE(pos + k)",
                   .vmin = -1,
                   .vmax = 1};
  ctx.figure("fitted_m", heatmap_svg(hm),
             "Fitted with no form assumed, M_k comes out block-diagonal: one 2x2 rotation per "
             "frequency, zero elsewhere");
  return worst;
}

// ---- 3. the dot product of two encodings depends on the distance only ----
// Returns the Euclidean distance of the closest two distinct positions.
double report_dot_products(const Tensor& pe, int64_t n, RunContext& ctx) {
  const int64_t d = pe.size(1);
  ctx.section("PE(i) . PE(j) against the distance |i - j|");
  const std::vector<double> dots = pairwise_dots(pe, pe, n);
  const OffsetSpread spread = spread_by_offset(dots, n, /*absolute=*/true);
  // Analytic: sum over pairs of sin(wi) sin(wj) + cos(wi) cos(wj) = cos(w (i - j)).
  const std::vector<double> analytic = kit::column(spread.offsets, [d](double offset) {
    double s = 0;
    for (int64_t i = 0; i < d / 2; ++i) s += std::cos(frequency(i, d) * offset);
    return s;
  });
  const double analytic_diff = kit::max_abs_diff(analytic, spread.means);
  // Distinct positions stay apart: the smallest |PE(i) - PE(j)|^2 = 2 (d/2 - dot) over i != j.
  double min_gap = INFINITY;
  int64_t first_rise = 0;
  for (size_t g = 1; g < spread.means.size(); ++g) {
    min_gap = std::min(min_gap, std::sqrt(std::max(0.0, 2 * (spread.means[0] - spread.means[g]))));
    if (!first_rise && g + 1 < spread.means.size() && spread.means[g + 1] > spread.means[g])
      first_rise = static_cast<int64_t>(g);
  }
  const double rel_dev = spread.max_deviation / spread.max_abs;
  ctx.note(fmt::format(
      "Grouped by distance |i - j|, the dot products of one distance agree to {:.2e} of the "
      "largest ({:.1f} = d/2, at distance 0), and the group means match sum_i cos(w_i |i - j|) "
      "to {:.2e}. The curve is not monotone: it first rises again after distance {}. A dot "
      "product is symmetric, so it cannot tell a key k places before a query from one k places "
      "after. The closest two distinct positions are {:.3f} apart (Euclidean): no two of the {} "
      "positions share a code.",
      rel_dev, spread.max_abs, analytic_diff, first_rise, min_gap, n));
  kit::record(ctx, {{"dot_relative_deviation", rel_dev},
                    {"dot_vs_analytic_max", analytic_diff},
                    {"dot_first_rise_distance", first_rise},
                    {"min_distinct_distance", min_gap}});
  LinePlot p{.series = {{"PE(i) . PE(j), mean per distance", spread.offsets, spread.means},
                        {"sum cos(w_i |i - j|)", spread.offsets, analytic, "", true, false}},
             .title = fmt::format("Dot product of two sinusoidal encodings (d = {})", d),
             .x_label = "distance |i - j|",
             .y_label = "PE(i) . PE(j)"};
  ctx.figure("dot_vs_distance", line_plot_svg(p),
             "The dot product is a function of the distance alone, falling from d/2 unevenly");
  const int64_t hn = std::min<int64_t>(n, 48);
  const Heatmap dh{.values = leading_block(dots, n, hn),
                   .title = fmt::format("PE(i) . PE(j), positions 0..{}", hn - 1),
                   .x_label = "j",
                   .y_label = "i"};
  ctx.figure("dot_matrix", heatmap_svg(dh), "Constant along every diagonal (a Toeplitz matrix)");
  return min_gap;
}

void run(const Config& cfg, RunContext& ctx) {
  const int64_t d = cfg.get_int("d_model"), n = cfg.get_int("positions");
  const auto& shifts = cfg.get_ints("shifts");
  if (d % 2 != 0)
    throw UsageError(
        fmt::format("sinusoid-shift: --d_model must be even (column pairs), got {}", d));
  if (n < d)
    throw UsageError(fmt::format(
        "sinusoid-shift: --positions ({}) must be at least --d_model ({}): fitting any d x d map "
        "needs at least d positions",
        n, d));
  const int64_t max_shift = *std::max_element(shifts.begin(), shifts.end());
  const Tensor pe = nn::sinusoidal_table(n + max_shift, d);  // the project's float table
  Generator gen(ctx.seed());
  const Tensor control = Tensor::randn({n + max_shift, d}, gen);  // an untrained learned table
  // ---- 1. the table is the formula: max |table - sin/cos(p w_i)| over every entry ----
  double formula_diff = 0;
  for (int64_t p = 0; p < n + max_shift; ++p)
    for (int64_t i = 0; i < d / 2; ++i) {
      const double a = static_cast<double>(p) * frequency(i, d);
      formula_diff = std::max({formula_diff, std::abs(pe[p * d + 2 * i] - std::sin(a)),
                               std::abs(pe[p * d + 2 * i + 1] - std::cos(a))});
    }
  ctx.result("table_vs_formula_max", formula_diff);
  ctx.section(fmt::format("PE(pos + k) = M_k PE(pos): d_model {}, positions 0..{}", d, n - 1));
  const ShiftFit block = report_block_fits(pe, control, shifts, n, ctx);
  const double full_worst = report_full_fits(pe, shifts, n, ctx);
  const double min_gap = report_dot_products(pe, n, ctx);

  const double eps = std::numeric_limits<float>::epsilon();
  const bool linear = std::max(block.residual, full_worst) < 100 * eps;
  DocumentComparison cmp("000 §VIII, 001, 003 vs ours");
  cmp.add("003: the table is sin/cos(pos / 10000^(2i/d)) (max |table - formula|)", 0.0,
          formula_diff, 10 * eps, "", 8);
  cmp.add_exact("000 §VIII, 001: PE(pos + k) is a linear function of PE(pos)", "yes",
                kit::yes_no(linear),
                fmt::format("residual of the best d x d map {:.2e}, of the block fit {:.2e} "
                            "(float32 rounding {:.1e}); a random table: {:.3f}",
                            full_worst, block.residual, eps, block.control_residual));
  cmp.add_exact("000 §VIII: f is one fixed map for every pos (a rotation per frequency)", "yes",
                kit::yes_no(block.vs_analytic < 1e-3 && block.halves < 1e-3),
                fmt::format("max entry difference {:.2e} from the rotation, {:.2e} between halves",
                            block.vs_analytic, block.halves));
  cmp.add_exact(
      "001: positions remain distinguishable", "yes", kit::yes_no(min_gap > 1e-3),
      fmt::format("closest pair of distinct positions {:.3f} apart over {} positions", min_gap, n));
  ctx.compare(cmp);
}

}  // namespace

Experiment sinusoid_shift() {
  Experiment e;
  e.name = "sinusoid-shift";
  e.source = "000 §VIII, 001 (Positional encoding), 003 (The transformer architecture)";
  e.purpose =
      "PE(pos+k) = M_k PE(pos): fit M_k, compare with the rotation; dot product vs distance";
  e.config.add_int("d_model", 64, "width of the table (even)", {.min = 2})
      .add_int("positions", 256, "positions the fit runs over", {.min = 4})
      .add_ints("shifts", {1, 2, 5, 20, 100}, "shifts k to fit", {.min = 1});
  e.quick = {{"positions", "96"}, {"shifts", "1,7"}};
  e.run = run;
  return e;
}

}  // namespace attn::experiments
