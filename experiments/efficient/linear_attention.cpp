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
// Three forms of causal linear attention (prefix sums, the fast-weight loop, a masked T x T
// kernel) are checked against each other in linear_attention_equivalence.h.
#include "nn/attention/linear_attention.h"
#include "experiments/efficient/linear_attention_equivalence.h"
#include "experiments/kit/kit.h"

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

// "T = 300", or where the crossing lies when the ratio softmax / linear never passes 1.
std::string where(double cross, const std::vector<double>& ratio, const std::vector<double>& ts) {
  if (!std::isnan(cross)) return fmt::format("T = {:.0f}", cross);
  return ratio.front() >= 1 ? fmt::format("below T = {:.0f}", ts.front())
                            : fmt::format("above T = {:.0f}", ts.back());
}

// The counted FLOPs of both layers at every length: softmax, linear.
std::pair<std::vector<double>, std::vector<double>> counted_part(const Config& cfg,
                                                                 RunContext& ctx,
                                                                 const std::vector<double>& ts) {
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
  return {fs, fl};
}

// The timed forms, in the order of Timings::ms; each one's results key is "<key>_ms".
enum Form { kSoftmax, kSoftmaxCausal, kLinear, kLinearCausal, kRecurrent, kForms };
const char* const kFormKeys[kForms] = {"softmax", "softmax_causal", "linear", "linear_causal",
                                       "recurrent"};

struct Timings {
  std::vector<double> ms[kForms];  // median ms per length; recurrent NaN above recurrent_max_t
};

// Every form at every length, interleaved; forward alone or forward + backward from sum(y).
Timings time_forms(const Config& cfg, uint64_t seed, const std::vector<double>& ts) {
  const int64_t d = cfg.get_int("d");
  const bool backward = cfg.get_bool("backward");
  Generator gen(seed);
  nn::SdpaOptions causal;
  causal.masks.causal = true;
  Timings tm;
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
    if (t <= cfg.get_int("recurrent_max_t"))
      works.push_back(unit([&] { return nn::linear_attention_recurrent(q, k, v); }));
    const std::vector<Timing> r =
        time_interleaved(works, static_cast<int>(cfg.get_int("reps")), cfg.get_real("budget_s"));
    for (size_t f = 0; f < kForms; ++f)
      tm.ms[f].push_back(f < r.size() ? r[f].median_s * 1e3
                                      : std::numeric_limits<double>::quiet_NaN());
  }
  return tm;
}

Timings measured_part(const Config& cfg, RunContext& ctx, const std::vector<double>& ts) {
  const int64_t d = cfg.get_int("d");
  const bool backward = cfg.get_bool("backward");
  ScopedThreads threads(static_cast<int>(cfg.get_int("timing_threads")));
  const std::string what = backward ? "forward + backward" : "forward";
  const double passes = backward ? 3 : 1;  // GFLOP/s: backward counted as twice the forward
  ctx.section(fmt::format("Measured {} time on this machine ({} thread{})", what, num_threads(),
                          num_threads() == 1 ? "" : "s"));
  const double load = load_average();
  ctx.result("load_average_before", load);
  ctx.result("timing_threads", num_threads());
  const Timings tm = time_forms(cfg, ctx.seed(), ts);
  const std::vector<double>&soft = tm.ms[kSoftmax], &lin = tm.ms[kLinear];
  Table tab(fmt::format("Median {} time (ms), d = {}", what, d),
            {"T", "softmax", "softmax causal", "linear", "linear causal", "fast-weight loop",
             "softmax / linear", "softmax GFLOP/s", "linear GFLOP/s"});
  for (size_t i = 0; i < ts.size(); ++i) {
    std::vector<std::string> row{std::to_string(static_cast<int64_t>(ts[i]))};
    for (const auto& ms : tm.ms) row.push_back(std::isnan(ms[i]) ? "-" : fixed(ms[i], 3));
    const auto dd = static_cast<double>(d);
    row.insert(row.end(), {fixed(soft[i] / lin[i], 2),
                           fixed(passes * softmax_flops(ts[i], dd) / soft[i] / 1e6, 1),
                           fixed(passes * linear_flops(ts[i], dd) / lin[i] / 1e6, 1)});
    tab.add_row(row);
  }
  ctx.table(tab);
  // Causal softmax against the non-causal one at the largest T: on the fast path a causal mask
  // alone never computes the hidden scores; on the reference path it computes all T^2 and masks.
  const double causal_ratio = tm.ms[kSoftmaxCausal].back() / soft.back();
  ctx.result("softmax_causal_over_full_at_largest_T", causal_ratio);
  ctx.note(fmt::format(
      "Each cell is the median of up to {} rounds in which all forms run in turn (fewer rounds, "
      "at least {}, when a round is slow: about {} s per length); 1-minute load average at the "
      "start: {:.1f}. '-': the step-by-step loop is skipped above T = {} (--recurrent_max_t). "
      "At T = {:.0f} causal softmax attention takes {:.2f} times the time of the non-causal one, "
      "on the {} path: {}.",
      cfg.get_int("reps"), kMinTimedRounds, cfg.get_real("budget_s"), load,
      cfg.get_int("recurrent_max_t"), ts.back(), causal_ratio, path_name(),
      reference_mode() ? "it computes every one of the T x T scores, then builds and applies the "
                         "mask"
                       : "its fused kernel never computes the scores above the diagonal"));
  for (size_t f = 0; f < kForms; ++f) ctx.result(fmt::format("{}_ms", kFormKeys[f]), tm.ms[f]);
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
  return {x, passes * softmax_flops(x, d) / tm.ms[kSoftmax][best] / 1e6,
          passes * linear_flops(x, d) / tm.ms[kLinear][best] / 1e6};
}

// Where linear attention overtakes softmax attention, measured (NaN: not inside the lengths)
// and predicted from the counts moved by the achieved rates, and the growth exponents.
struct Crossover {
  std::vector<double> ratio, ratio_causal;  // softmax / linear time per length
  double cross = 0, cross_causal = 0, predicted = 0, from = 0, s_soft = 0, s_lin = 0;
  std::string rate_reason;
};

Crossover crossover_part(const Config& cfg,
                         RunContext& ctx,
                         const std::vector<double>& ts,
                         const Timings& tm) {
  const double d = static_cast<double>(cfg.get_int("d"));
  Crossover c;
  for (size_t i = 0; i < ts.size(); ++i) {
    c.ratio.push_back(tm.ms[kSoftmax][i] / tm.ms[kLinear][i]);
    c.ratio_causal.push_back(tm.ms[kSoftmaxCausal][i] / tm.ms[kLinearCausal][i]);
  }
  c.cross = log_log_crossing(ts, c.ratio);
  c.cross_causal = log_log_crossing(ts, c.ratio_causal);
  // Growth exponents over the top three octaves of lengths, where the T^2 and T terms dominate.
  c.from = ts.back() / 8;
  c.s_soft = log_log_slope(ts, tm.ms[kSoftmax], c.from);
  c.s_lin = log_log_slope(ts, tm.ms[kLinear], c.from);
  ctx.result("measured_crossover_T", finite_or_null(c.cross));
  ctx.result("measured_crossover_T_causal", finite_or_null(c.cross_causal));
  ctx.result("softmax_growth_exponent", c.s_soft);
  ctx.result("linear_growth_exponent", c.s_lin);
  ctx.result("linear_faster_at_largest_T", c.ratio.back() > 1);

  ctx.section("Crossover: predicted from the FLOP counts, measured from the times");
  c.predicted = flop_crossover(d);
  const CrossoverRates rates = rates_near(ts, tm, d, std::isnan(c.cross) ? c.predicted : c.cross,
                                          cfg.get_bool("backward") ? 3 : 1);
  const double rate_ratio = rates.softmax_gflops / rates.linear_gflops;
  const double rate_corrected = c.predicted * rate_ratio;
  ctx.result("crossover_rates_at_T", rates.t);
  ctx.result("softmax_gflops_near_crossover", rates.softmax_gflops);
  ctx.result("linear_gflops_near_crossover", rates.linear_gflops);
  ctx.result("rate_corrected_crossover_T", rate_corrected);
  // time = FLOPs / rate and the FLOP ratio softmax / linear is T / T*, so the times are equal
  // where T / T* = rate_softmax / rate_linear: the counted crossover moves by the rate ratio.
  c.rate_reason = fmt::format(
      "at T = {:.0f} softmax attention runs at {:.1f} GFLOP/s and linear attention at "
      "{:.1f}, so equal times need a FLOP ratio of {:.2f} instead of 1, which puts the crossover "
      "near T* x {:.2f} = {:.0f}",
      rates.t, rates.softmax_gflops, rates.linear_gflops, rate_ratio, rate_ratio, rate_corrected);
  ctx.note(fmt::format(
      "Linear attention overtakes softmax attention at {} (non-causal) and {} (causal), against "
      "T* = {:.1f} from the FLOP counts. Time is not FLOPs: {}. For T >= {:.0f} softmax time "
      "grows like T^{:.2f} and linear like T^{:.2f}.",
      where(c.cross, c.ratio, ts), where(c.cross_causal, c.ratio_causal, ts), c.predicted,
      c.rate_reason, c.from, c.s_soft, c.s_lin));
  return c;
}

void compare_with_document(const Crossover& c,
                           double recurrent_diff,
                           const std::vector<double>& ts,
                           RunContext& ctx) {
  DocumentComparison cmp("002 Ex. 39.6 and §39.4.1: the claims, checked");
  // O(T^2 d) against O(T d^2) says the two cost the same near T = d; the counts make that T*,
  // and the timings say where linear attention really becomes the faster one. Compared as
  // log2 T: ok within a factor of 2.
  if (std::isnan(c.cross)) {
    cmp.add_exact("crossover T: FLOP counts vs measured times", fmt::format("{:.0f}", c.predicted),
                  where(c.cross, c.ratio, ts), "measured: " + c.rate_reason);
  } else {
    const bool close = std::abs(std::log2(c.cross / c.predicted)) <= 1;
    const std::string values =
        fmt::format("T* = {:.1f} counted, T = {:.0f} measured", c.predicted, c.cross);
    cmp.add("crossover T: FLOP counts vs measured times (log2 T, within a factor 2)",
            std::log2(c.predicted), std::log2(c.cross), 1.0,
            close ? values : values + "; measured: " + c.rate_reason, 2);
  }
  cmp.add("softmax time growth exponent (top 3 octaves of T)", 2.0, c.s_soft, 0.5,
          "timing: machine-dependent; ok within 0.5", 2);
  cmp.add("linear time growth exponent (top 3 octaves of T)", 1.0, c.s_lin, 0.5,
          "timing: machine-dependent; ok within 0.5", 2);
  cmp.add("fast-weight loop vs parallel causal, max |y diff|", 0.0, recurrent_diff, 1e-4,
          "float32 round-off only", 7);
  cmp.add_exact("linear attention faster at the largest T", "yes",
                c.ratio.back() > 1 ? "yes" : "no");
  ctx.compare(cmp);
}

void figures_part(const Config& cfg,
                  RunContext& ctx,
                  const std::vector<double>& ts,
                  const Timings& tm,
                  const Crossover& c,
                  const std::pair<std::vector<double>, std::vector<double>>& flops) {
  const double d = static_cast<double>(cfg.get_int("d"));
  const auto& ms = tm.ms;
  LinePlot p = kit::line_plot(
      fmt::format("{} time, d = {}", cfg.get_bool("backward") ? "Forward + backward" : "Forward",
                  cfg.get_int("d")),
      "sequence length T", "ms", kit::Axes::kLogLog);
  p.series = {{"softmax attention", ts, ms[kSoftmax], "#f59e0b"},
              {"softmax, causal", ts, ms[kSoftmaxCausal], "#f59e0b", true},
              {"linear attention", ts, ms[kLinear], "#3b82f6"},
              {"linear, causal (prefix sums)", ts, ms[kLinearCausal], "#3b82f6", true},
              {"fast-weight loop (1 step/token)", ts, ms[kRecurrent], "#10b981", true}};
  p.refs = {{RefLine::kVertical, flop_crossover(d),
             fmt::format("FLOP crossover T = {:.0f}", flop_crossover(d))}};
  if (!std::isnan(c.cross))
    p.refs.push_back({RefLine::kVertical, c.cross, fmt::format("measured T = {:.0f}", c.cross)});
  ctx.figure("time", line_plot_svg(p), "O(T^2 d) softmax against O(T d^2) linear attention");

  LinePlot f = kit::line_plot("Counted FLOPs", "sequence length T", "FLOPs", kit::Axes::kLogLog);
  f.series = {{"softmax 4T^2d + 5T^2", ts, flops.first, "#f59e0b"},
              {"linear 4Td^2 + 8Td + T", ts, flops.second, "#3b82f6"}};
  f.refs = {{RefLine::kVertical, flop_crossover(d), "T*"}};
  ctx.figure("flops", line_plot_svg(f), "The counts cross at T* just above d");
}

void run(const Config& cfg, RunContext& ctx) {
  const std::vector<int64_t> lengths = cfg.get_ints("lengths");
  if (lengths.size() < 2) throw UsageError("linear-attention: --lengths needs at least two values");
  std::vector<double> ts(lengths.begin(), lengths.end());
  ctx.result("lengths", lengths);
  const auto flops = counted_part(cfg, ctx, ts);
  const Timings tm = measured_part(cfg, ctx, ts);
  const double recurrent_diff = equivalence_part(cfg, ctx);
  const Crossover c = crossover_part(cfg, ctx, ts, tm);
  compare_with_document(c, recurrent_diff, ts, ctx);
  figures_part(cfg, ctx, ts, tm, c, flops);
}

}  // namespace

Experiment linear_attention() {
  Experiment e;
  e.name = "linear-attention";
  e.source = "002 Ex. 39.6, §39.4.1";
  e.purpose = "Softmax vs linear attention time against T; fast weights = causal linear attention";
  e.nondeterministic = {"reads crossover lengths and growth exponents off measured times",
                        {"^(measured|rate_corrected)_crossover", "^crossover_rates",
                         "^crossover T:", "growth.exponent", "faster", "_over_full_at_largest_T$"}};
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
