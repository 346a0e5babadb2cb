// linear-attention [002 Ex. 39.6, §39.4.1]: softmax attention costs O(T^2 d), linear attention
// phi(Q) (phi(K)^T V) with phi = elu + 1 costs O(T d^2). Where do they cross, counted and
// measured? And the causal form is Schmidhuber's 1991 fast-weight programmer: a recurrence whose
// state is the matrix S_t = sum_{s<=t} phi(k_s) v_s^T, giving the same numbers step by step.
//
//   attnlab run linear-attention
//   attnlab run linear-attention --lengths 64,256,1024,4096,16384 --reps 3
//
// Counting (multiply-add = 2 FLOPs, one head, D = M = d, batch 1):
//   softmax:  Q K^T 2 T^2 d, scale T^2, softmax 4 T^2, A V 2 T^2 d  -> 4 T^2 d + 5 T^2
//   linear:   phi on q and k 2 x 2 T d, S = phi(K)^T V 2 T d^2, z = sum_s phi(k_s) T d,
//             phi(Q) S 2 T d^2, phi(Q) z 2 T d, + eps T, divide T d   -> 4 T d^2 + 8 T d + T
// Equal at T* = (4 d^2 + 8 d + 1) / (4 d + 5), just above d: below T = d the T x T matrix is the
// smaller object, above it the d x d state is.
//
// Three forms of causal linear attention are checked against each other (outputs and the
// gradients of a random projection of them with respect to q, k, v):
//   parallel   nn::linear_attention(causal) — prefix sums in one fused op;
//   recurrent  nn::linear_attention_recurrent — the fast-weight loop, one step per token;
//   quadratic  (phi(Q) phi(K)^T masked to s <= t) V / row sums — attention with a T x T matrix
//              whose kernel is phi(q).phi(k) instead of exp(q.k / sqrt(d)).
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "autograd/mode.h"
#include "experiments/common/interleaved_timing.h"
#include "experiments/common/loglog.h"
#include "experiments/experiment.h"
#include "experiments/report/charts.h"
#include "experiments/run_context.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/sdpa.h"

namespace attn::experiments {

namespace {

double softmax_flops(double t, double d) {
  return 4 * t * t * d + 5 * t * t;
}
double linear_flops(double t, double d) {
  return 4 * t * d * d + 8 * t * d + t;
}
double flop_crossover(double d) {  // T where the two counts are equal
  return (4 * d * d + 8 * d + 1) / (4 * d + 5);
}

void counted_part(const Config& cfg, RunContext& ctx, const std::vector<double>& ts) {
  const double d = static_cast<double>(cfg.get_int("d"));
  ctx.section("Counted FLOPs (one head, batch 1, multiply-add = 2)");
  Table tab(fmt::format("d = {}", cfg.get_int("d")),
            {"T", "softmax 4T^2d + 5T^2", "linear 4Td^2 + 8Td + T", "softmax / linear"});
  std::vector<double> fs, fl;
  for (double t : ts) {
    fs.push_back(softmax_flops(t, d));
    fl.push_back(linear_flops(t, d));
    tab.add_row({fmt::format("{:.0f}", t), sig(fs.back(), 4), sig(fl.back(), 4),
                 fixed(fs.back() / fl.back(), 2)});
  }
  ctx.table(tab);
  ctx.result("flops_softmax", fs);
  ctx.result("flops_linear", fl);
  ctx.result("flop_crossover_T", flop_crossover(d));
  ctx.note(fmt::format(
      "The counts are equal at T* = (4d^2 + 8d + 1) / (4d + 5) = {:.2f} for d = {}: the ratio of "
      "the two is about T / d, so the exercise's O(T^2 d) -> O(T d^2) saving only pays once the "
      "sequence is longer than the head is wide.",
      flop_crossover(d), cfg.get_int("d")));
}

struct Timings {
  std::vector<double> softmax, softmax_causal, linear, linear_causal, recurrent;
};

Timings measured_part(const Config& cfg, RunContext& ctx, const std::vector<double>& ts) {
  const int64_t d = cfg.get_int("d"), rec_max = cfg.get_int("recurrent_max_t");
  const int reps = static_cast<int>(cfg.get_int("reps"));
  const double budget = cfg.get_real("budget_s");
  const bool backward = cfg.get_bool("backward");
  ScopedThreads threads(static_cast<int>(cfg.get_int("timing_threads")));
  Generator gen(ctx.seed());
  const std::string what = backward ? "forward + backward" : "forward";
  const double passes = backward ? 3 : 1;  // GFLOP/s: backward counted as twice the forward
  ctx.section(fmt::format("Measured {} time on this machine ({} thread{})", what, num_threads(),
                          num_threads() == 1 ? "" : "s"));
  const double load = load_average();
  ctx.result("load_average_before", load);
  ctx.result("timing_threads", num_threads());
  Timings tm;
  Table tab(fmt::format("Median {} time (ms), d = {}", what, d),
            {"T", "softmax", "softmax causal", "linear", "linear causal", "fast-weight loop",
             "softmax / linear", "softmax GFLOP/s", "linear GFLOP/s"});
  nn::SdpaOptions causal;
  causal.masks.causal = true;
  for (double tt : ts) {
    const int64_t t = static_cast<int64_t>(tt);
    Var q = Var::parameter(Tensor::randn({1, 1, t, d}, gen));
    Var k = Var::parameter(Tensor::randn({1, 1, t, d}, gen));
    Var v = Var::parameter(Tensor::randn({1, 1, t, d}, gen));
    // One timed unit: the forward alone (nothing recorded), or forward + backward from sum(y).
    auto unit = [&](std::function<Var()> forward) -> std::function<void()> {
      return [&q, &k, &v, backward, forward] {
        if (!backward) {
          NoGrad off;
          forward();
          return;
        }
        for (Var* p : {&q, &k, &v}) p->zero_grad();
        sum(forward()).backward();
      };
    };
    std::vector<std::function<void()>> works{
        unit([&] { return nn::scaled_dot_product_attention(q, k, v).out; }),
        unit([&] { return nn::scaled_dot_product_attention(q, k, v, causal).out; }),
        unit([&] { return nn::linear_attention(q, k, v, false); }),
        unit([&] { return nn::linear_attention(q, k, v, true); })};
    if (t <= rec_max)
      works.push_back(unit([&] { return nn::linear_attention_recurrent(q, k, v); }));
    const std::vector<Timing> r = time_interleaved(works, reps, budget);
    tm.softmax.push_back(r[0].median_s * 1e3);
    tm.softmax_causal.push_back(r[1].median_s * 1e3);
    tm.linear.push_back(r[2].median_s * 1e3);
    tm.linear_causal.push_back(r[3].median_s * 1e3);
    tm.recurrent.push_back(r.size() > 4 ? r[4].median_s * 1e3
                                        : std::numeric_limits<double>::quiet_NaN());
    auto cell = [](double ms) { return std::isnan(ms) ? std::string("-") : fixed(ms, 3); };
    tab.add_row(
        {std::to_string(t), cell(tm.softmax.back()), cell(tm.softmax_causal.back()),
         cell(tm.linear.back()), cell(tm.linear_causal.back()), cell(tm.recurrent.back()),
         fixed(tm.softmax.back() / tm.linear.back(), 2),
         fixed(passes * softmax_flops(tt, static_cast<double>(d)) / tm.softmax.back() / 1e6, 1),
         fixed(passes * linear_flops(tt, static_cast<double>(d)) / tm.linear.back() / 1e6, 1)});
  }
  ctx.table(tab);
  // Causal softmax against the non-causal one at the largest T: on the fast path a causal mask
  // alone never computes the hidden scores; on the reference path it computes all T^2 and masks.
  const double causal_ratio = tm.softmax_causal.back() / tm.softmax.back();
  ctx.result("softmax_causal_over_full_at_largest_T", causal_ratio);
  ctx.note(fmt::format(
      "Each cell is the median of up to {} rounds in which all forms run in turn (fewer rounds, "
      "at least {}, when a round is slow: about {} s per length); 1-minute load average at the "
      "start: {:.1f}. '-': the step-by-step loop is skipped above T = {} (--recurrent_max_t). "
      "At T = {:.0f} causal softmax attention takes {:.2f} times the time of the non-causal one, "
      "on the {} path: {}.",
      reps, kMinTimedRounds, budget, load, rec_max, ts.back(), causal_ratio, path_name(),
      reference_mode() ? "it computes every one of the T x T scores, then builds and applies the "
                         "mask"
                       : "its fused kernel never computes the scores above the diagonal"));
  ctx.result("softmax_ms", tm.softmax);
  ctx.result("softmax_causal_ms", tm.softmax_causal);
  ctx.result("linear_ms", tm.linear);
  ctx.result("linear_causal_ms", tm.linear_causal);
  ctx.result("recurrent_ms", tm.recurrent);
  return tm;
}

// The achieved rates of both layers, in GFLOP/s, at the timed length nearest `t` on a log scale
// (`passes`: 1 for the forward alone, 3 for forward + backward, counted as twice the forward).
struct CrossoverRates {
  double t = 0, softmax_gflops = 0, linear_gflops = 0;
};

CrossoverRates rates_near(
    const std::vector<double>& ts, const Timings& tm, double d, double t, double passes) {
  size_t best = 0;
  for (size_t i = 1; i < ts.size(); ++i)
    if (std::abs(std::log(ts[i] / t)) < std::abs(std::log(ts[best] / t))) best = i;
  const double x = ts[best];  // times are in ms: FLOPs / ms / 1e6 = GFLOP/s
  return {x, passes * softmax_flops(x, d) / tm.softmax[best] / 1e6,
          passes * linear_flops(x, d) / tm.linear[best] / 1e6};
}

// The three causal forms (and the two non-causal ones) on the same q, k, v: outputs and the
// gradients of sum(y * w) for a fixed random w.
double equivalence_part(const Config& cfg, RunContext& ctx) {
  const int64_t t = cfg.get_int("equiv_t"), d = cfg.get_int("d"), h = cfg.get_int("equiv_heads");
  Generator gen(ctx.seed() + 1);
  const Tensor q0 = Tensor::randn({1, h, t, d}, gen), k0 = Tensor::randn({1, h, t, d}, gen),
               v0 = Tensor::randn({1, h, t, d}, gen), w = Tensor::randn({1, h, t, d}, gen);
  Tensor tril = Tensor::zeros({t, t});
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j <= i; ++j) tril[i * t + j] = 1;
  const Var mask = Var::constant(tril);

  struct Result {
    Tensor y, dq, dk, dv;
  };
  // form 0: parallel (fused op or composed), 1: fast-weight loop, 2: quadratic T x T
  auto forward_backward = [&](int form, bool causal) {
    Var q = Var::parameter(q0), k = Var::parameter(k0), v = Var::parameter(v0);
    Var y;
    if (form == 0) {
      y = nn::linear_attention(q, k, v, causal);
    } else if (form == 1) {
      y = nn::linear_attention_recurrent(q, k, v);
    } else {
      Var a = matmul(nn::elu_feature_map(q), nn::elu_feature_map(k), false, true);  // (1,H,T,T)
      if (causal) a = mul(a, mask);
      y = div(matmul(a, v), add_scalar(sum(a, 3, true), static_cast<real>(1e-6)));
    }
    Result r{y.value(), {}, {}, {}};
    sum(mul(y, Var::constant(w))).backward();
    r.dq = q.grad();
    r.dk = k.grad();
    r.dv = v.grad();
    return r;
  };
  auto diffs = [](const Result& a, const Result& b) {
    return std::vector<double>{max_abs_diff(a.y, b.y), max_abs_diff(a.dq, b.dq),
                               max_abs_diff(a.dk, b.dk), max_abs_diff(a.dv, b.dv)};
  };
  const Result par = forward_backward(0, true), rec = forward_backward(1, true),
               quad = forward_backward(2, true);
  const Result par_nc = forward_backward(0, false), quad_nc = forward_backward(2, false);
  const std::vector<double> pr = diffs(par, rec), pq = diffs(par, quad),
                            nc = diffs(par_nc, quad_nc);

  // The fast-weight matrix after the last step is phi(K)^T V, the non-causal state.
  nn::FastWeightState st;
  {
    NoGrad off;
    const Var q = Var::constant(q0), k = Var::constant(k0), v = Var::constant(v0);
    for (int64_t i = 0; i < t; ++i)
      nn::linear_attention_step(slice(q, 2, i, i + 1), slice(k, 2, i, i + 1), slice(v, 2, i, i + 1),
                                st);
  }
  const Tensor ktv =
      matmul(nn::elu_feature_map(Var::constant(k0)), Var::constant(v0), true, false).value();
  auto max_abs = [](const Tensor& x) { return max_abs_diff(x, Tensor::zeros(x.shape())); };
  const double state_diff = max_abs_diff(st.s.value(), ktv), state_scale = max_abs(ktv);
  const double y_scale = max_abs(par.y), g_scale = max_abs(par.dk);

  ctx.section(
      fmt::format("Fast weights = causal linear attention (T = {}, {} heads, d = {})", t, h, d));
  Table tab("max |difference| against the parallel form (float32)",
            {"pair", "outputs y", "dL/dq", "dL/dk", "dL/dv"});
  auto row = [&](const std::string& name, const std::vector<double>& x) {
    tab.add_row({name, sig(x[0], 2), sig(x[1], 2), sig(x[2], 2), sig(x[3], 2)});
  };
  row("causal: fast-weight loop vs prefix sums", pr);
  row("causal: T x T masked kernel vs prefix sums", pq);
  row("non-causal: T x T kernel vs phi(Q)(phi(K)^T V)", nc);
  ctx.table(tab);
  ctx.note(fmt::format(
      "L = sum(y * w) for a fixed random w. For scale: max |y| = {:.3g}, max |dL/dk| = {:.3g}. "
      "After the last step the fast-weight matrix S_T (entries up to {:.3g}) differs from "
      "phi(K)^T V by {:.2g}, a relative {:.1g}: the 1991 memory written by outer products is "
      "the matrix linear attention reads.",
      y_scale, g_scale, state_scale, state_diff, state_diff / state_scale));
  const char* names[] = {"y", "dq", "dk", "dv"};
  for (int i = 0; i < 4; ++i) {
    ctx.result(fmt::format("diff_recurrent_vs_parallel_{}", names[i]), pr[i]);
    ctx.result(fmt::format("diff_quadratic_vs_parallel_{}", names[i]), pq[i]);
    ctx.result(fmt::format("diff_noncausal_quadratic_vs_parallel_{}", names[i]), nc[i]);
  }
  ctx.result("diff_fast_weight_state_vs_KtV", state_diff);
  ctx.result("relative_diff_fast_weight_state_vs_KtV", state_diff / state_scale);
  ctx.result("equiv_max_abs_y", y_scale);
  return pr[0];
}

void run(const Config& cfg, RunContext& ctx) {
  const std::vector<int64_t> lengths = cfg.get_ints("lengths");
  if (lengths.size() < 2) throw UsageError("linear-attention: --lengths needs at least two values");
  const double d = static_cast<double>(cfg.get_int("d"));
  std::vector<double> ts(lengths.begin(), lengths.end());
  ctx.result("lengths", lengths);

  counted_part(cfg, ctx, ts);
  const Timings tm = measured_part(cfg, ctx, ts);
  const double recurrent_diff = equivalence_part(cfg, ctx);

  std::vector<double> ratio, ratio_causal;
  for (size_t i = 0; i < ts.size(); ++i) {
    ratio.push_back(tm.softmax[i] / tm.linear[i]);
    ratio_causal.push_back(tm.softmax_causal[i] / tm.linear_causal[i]);
  }
  const double cross = log_log_crossing(ts, ratio),
               cross_causal = log_log_crossing(ts, ratio_causal);
  // Growth exponents over the top three octaves of lengths, where the T^2 and T terms dominate.
  const double from = ts.back() / 8;
  const double s_soft = log_log_slope(ts, tm.softmax, from),
               s_lin = log_log_slope(ts, tm.linear, from);
  ctx.result("measured_crossover_T", finite_or_null(cross));
  ctx.result("measured_crossover_T_causal", finite_or_null(cross_causal));
  ctx.result("softmax_growth_exponent", s_soft);
  ctx.result("linear_growth_exponent", s_lin);
  ctx.result("linear_faster_at_largest_T", ratio.back() > 1);

  auto where = [&](double c, const std::vector<double>& r) {
    if (!std::isnan(c)) return fmt::format("T = {:.0f}", c);
    return r.front() >= 1 ? fmt::format("below T = {}", lengths.front())
                          : fmt::format("above T = {}", lengths.back());
  };
  ctx.section("Crossover: predicted from the FLOP counts, measured from the times");
  const double predicted = flop_crossover(d);
  const CrossoverRates rates = rates_near(ts, tm, d, std::isnan(cross) ? predicted : cross,
                                          cfg.get_bool("backward") ? 3 : 1);
  const double rate_ratio = rates.softmax_gflops / rates.linear_gflops;
  const double rate_corrected = predicted * rate_ratio;
  ctx.result("crossover_rates_at_T", rates.t);
  ctx.result("softmax_gflops_near_crossover", rates.softmax_gflops);
  ctx.result("linear_gflops_near_crossover", rates.linear_gflops);
  ctx.result("rate_corrected_crossover_T", rate_corrected);
  // time = FLOPs / rate and the FLOP ratio softmax / linear is T / T*, so the times are equal
  // where T / T* = rate_softmax / rate_linear: the counted crossover moves by the rate ratio.
  const std::string rate_reason = fmt::format(
      "at T = {:.0f} softmax attention runs at {:.1f} GFLOP/s and linear attention at "
      "{:.1f}, so equal times need a FLOP ratio of {:.2f} instead of 1, which puts the crossover "
      "near T* x {:.2f} = {:.0f}",
      rates.t, rates.softmax_gflops, rates.linear_gflops, rate_ratio, rate_ratio, rate_corrected);
  ctx.note(fmt::format(
      "Linear attention overtakes softmax attention at {} (non-causal) and {} (causal), against "
      "T* = {:.1f} from the FLOP counts. Time is not FLOPs: {}. For T >= {:.0f} softmax time "
      "grows like T^{:.2f} and linear like T^{:.2f}.",
      where(cross, ratio), where(cross_causal, ratio_causal), predicted, rate_reason, from, s_soft,
      s_lin));

  DocumentComparison cmp("002 Ex. 39.6 and §39.4.1: the claims, checked");
  // O(T^2 d) against O(T d^2) says the two cost the same near T = d; the counts make that T*,
  // and the timings say where linear attention really becomes the faster one. Compared as
  // log2 T: ok within a factor of 2.
  if (std::isnan(cross)) {
    cmp.add_exact("crossover T: FLOP counts vs measured times", fmt::format("{:.0f}", predicted),
                  where(cross, ratio), "measured: " + rate_reason);
  } else {
    const bool close = std::abs(std::log2(cross / predicted)) <= 1;
    const std::string values =
        fmt::format("T* = {:.1f} counted, T = {:.0f} measured", predicted, cross);
    cmp.add("crossover T: FLOP counts vs measured times (log2 T, within a factor 2)",
            std::log2(predicted), std::log2(cross), 1.0,
            close ? values : values + "; measured: " + rate_reason, 2);
  }
  cmp.add("softmax time growth exponent (top 3 octaves of T)", 2.0, s_soft, 0.5,
          "timing: machine-dependent; ok within 0.5", 2);
  cmp.add("linear time growth exponent (top 3 octaves of T)", 1.0, s_lin, 0.5,
          "timing: machine-dependent; ok within 0.5", 2);
  cmp.add("fast-weight loop vs parallel causal, max |y diff|", 0.0, recurrent_diff, 1e-4,
          "float32 round-off only", 7);
  cmp.add_exact("linear attention faster at the largest T", "yes", ratio.back() > 1 ? "yes" : "no");
  ctx.compare(cmp);

  LinePlot p;
  p.series = {{"softmax attention", ts, tm.softmax, "#f59e0b"},
              {"softmax, causal", ts, tm.softmax_causal, "#f59e0b", true},
              {"linear attention", ts, tm.linear, "#3b82f6"},
              {"linear, causal (prefix sums)", ts, tm.linear_causal, "#3b82f6", true},
              {"fast-weight loop (1 step/token)", ts, tm.recurrent, "#10b981", true}};
  p.refs = {{RefLine::kVertical, flop_crossover(d),
             fmt::format("FLOP crossover T = {:.0f}", flop_crossover(d))}};
  if (!std::isnan(cross))
    p.refs.push_back({RefLine::kVertical, cross, fmt::format("measured T = {:.0f}", cross)});
  p.log_x = p.log_y = true;
  p.title =
      fmt::format("{} time, d = {}", cfg.get_bool("backward") ? "Forward + backward" : "Forward",
                  cfg.get_int("d"));
  p.x_label = "sequence length T";
  p.y_label = "ms";
  ctx.figure("time", line_plot_svg(p), "O(T^2 d) softmax against O(T d^2) linear attention");

  LinePlot f;
  std::vector<double> fs, fl;
  for (double t : ts) {
    fs.push_back(softmax_flops(t, d));
    fl.push_back(linear_flops(t, d));
  }
  f.series = {{"softmax 4T^2d + 5T^2", ts, fs, "#f59e0b"},
              {"linear 4Td^2 + 8Td + T", ts, fl, "#3b82f6"}};
  f.refs = {{RefLine::kVertical, flop_crossover(d), "T*"}};
  f.log_x = f.log_y = true;
  f.title = "Counted FLOPs";
  f.x_label = "sequence length T";
  f.y_label = "FLOPs";
  ctx.figure("flops", line_plot_svg(f), "The counts cross at T* just above d");
}

}  // namespace

Experiment linear_attention() {
  Experiment e;
  e.name = "linear-attention";
  e.source = "002 Ex. 39.6, §39.4.1";
  e.purpose = "Softmax vs linear attention time against T; fast weights = causal linear attention";
  e.typical_time = "~35 s";
  e.config
      .add_ints("lengths", {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192},
                "sequence lengths T to time", {.min = 2})
      .add_int("d", 64, "head dimension (D = M = d)", {.min = 1})
      .add_int("reps", 15, "timed repetitions per cell at most (the median is reported)",
               {.min = 1})
      .add_real("budget_s", 3.0, "about this many seconds of timing per length", {.min = 0})
      .add_int("timing_threads", 1, "threads for the timing (0 = the CLI's --threads)", {.min = 0})
      .add_int("recurrent_max_t", 2048, "time the step-by-step loop up to this T", {.min = 0})
      .add_bool("backward", false, "time forward + backward (from sum(y)) instead of forward")
      .add_int("equiv_t", 128, "T of the equivalence check", {.min = 1})
      .add_int("equiv_heads", 2, "heads in the equivalence check", {.min = 1});
  e.quick = {{"lengths", "16,64,256,1024"},
             {"reps", "3"},
             {"budget_s", "0.5"},
             {"recurrent_max_t", "256"},
             {"equiv_t", "48"}};
  e.run = run;
  return e;
}

}  // namespace attn::experiments
