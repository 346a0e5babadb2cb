// softmax-variants [004 §2.4, §3.1]: what the softmax variants of §2.4 buy, measured in float32.
//
//   attnlab run softmax-variants
//   attnlab run softmax-variants --classes 1000 --max_scale 1e6
//
// 1. Log-softmax. §2.4 says computing log-probabilities directly, y = x - max - log sum e^(x -
//    max), is numerically better than taking log(softmax(x)). We sweep the logit scale s (a row
//    spread evenly over [-s, s]) and find, by measurement, the first s where each form gives a
//    non-finite value or gradient: the direct op, log of the (max-subtracted) softmax op, and log
//    of exp(x) / sum exp(x) with no max at all.
// 2. The mask fill of §3.1. The Harvard code fills masked scores with -1e9 and its commentary
//    says this still hands the masked (future) positions a tiny weight. In float32 we measure
//    the weight a masked position gets for four fills (-1e4, -1e9, float32's lowest, -inf) over
//    logit scales 1 ... 1e12.
// 3. Adaptive softmax (frequency clusters): see softmax_vocab.cpp.
//
// Step through: break attn::LogSoftmaxOp::forward, then attn::LogOp::backward (1/p of a p that
// rounded to 0 is where the NaN gradient is born).
#include "experiments/basics/softmax_numerics.h"
#include "experiments/basics/softmax_vocab.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

std::string scale_or_none(double s) {
  return s == 0 ? "none" : fixed(s, 2);
}

// The float32 limits the breaking scales should meet: e^v overflows above ln(FLT_MAX) = 88.72;
// e^-v rounds to 0 (even as a denormal) beyond ln(denorm_min / 2) = -103.97; 1/p overflows
// when p < 1/FLT_MAX, i.e. log p < -88.72.
double ln_float_max() {
  return std::log(static_cast<double>(std::numeric_limits<real>::max()));
}
double ln_half_denorm() {
  return std::log(static_cast<double>(std::numeric_limits<real>::denorm_min()) / 2);
}

void log_softmax_part(const Config& cfg, RunContext& ctx, DocumentComparison& cmp) {
  const LogSoftmaxSweepSettings set{.classes = cfg.get_int("classes"),
                                    .max_scale = cfg.get_real("max_scale"),
                                    .per_octave = static_cast<int>(cfg.get_int("per_octave"))};
  const LogSoftmaxSweep sw = log_softmax_sweep(set);
  ctx.section("1. Log-softmax against log(softmax) as the logits grow");
  Table t(fmt::format("First scale s (row spread over [-s, s], {} classes, {} scales per octave) "
                      "where a form is not finite",
                      set.classes, set.per_octave),
          {"form", "values break at s", "gradients break at s", "largest finite value error"});
  LinePlot p = kit::line_plot("Error of the log-probabilities against double precision",
                              "logit scale s (row over [-s, s])", "max |float32 - exact|",
                              kit::Axes::kLogLog);
  for (const LogSoftmaxForm& form : sw.forms) {
    t.add_row({form.name, scale_or_none(form.first_bad_value), scale_or_none(form.first_bad_grad),
               sci(form.largest_finite_error)});
    ctx.result(form.key + "_first_bad_value_scale", form.first_bad_value);
    ctx.result(form.key + "_first_bad_grad_scale", form.first_bad_grad);
    ctx.result(form.key + "_largest_finite_error", form.largest_finite_error);
    p.series.push_back({form.name, sw.scales, form.value_error});
  }
  ctx.table(t);
  ctx.result("log_softmax_scales", sw.scales);
  ctx.result("direct_value_error", sw.forms[0].value_error);
  ctx.figure("log_softmax_error", line_plot_svg(p),
             "A missing point is a non-finite value: the naive forms stop where float32 does");
  const double s_top = sw.scales.back();
  ctx.note(fmt::format(
      "float32's limits: e^v overflows above v = {:.2f}; e^v rounds to 0 (even as a denormal) "
      "below v = {:.2f}; 1/p overflows for log p < -{:.2f}. log(softmax(x)) takes log(0) = -inf "
      "once the spread 2s passes ~{:.0f}; its gradient 1/p is inf (then inf * 0 = NaN in the "
      "softmax backward) already when the smallest p falls below 1/FLT_MAX (2s ~ {:.0f}), before "
      "the value breaks. Without the max the value breaks at the same s: not where e^s overflows "
      "(s = {:.2f}) but earlier, where the ratio e^-s / (sum ~ e^s) = e^-2s rounds to 0. "
      "log_softmax stays finite up to s = {:.0f} (the sweep's end).",
      ln_float_max(), ln_half_denorm(), ln_float_max(), -ln_half_denorm(), ln_float_max(),
      ln_float_max(), s_top));
  const LogSoftmaxForm &d = sw.forms[0], &l = sw.forms[1];
  const bool direct_ok = d.first_bad_value == 0 && d.first_bad_grad == 0;
  cmp.add_exact(
      fmt::format("2.4: log-softmax: values and gradients finite at every scale up to {:.0f}",
                  s_top),
      "yes", kit::yes_no(direct_ok));
  cmp.add_exact("2.4: log(softmax(x)) breaks at large logits where log-softmax does not", "yes",
                kit::yes_no(l.first_bad_value > 0 && direct_ok),
                fmt::format("values from s = {}, gradients from s = {}",
                            scale_or_none(l.first_bad_value), scale_or_none(l.first_bad_grad)));
}

std::vector<double> half_decades(double top) {
  std::vector<double> s;
  for (int k = 0; std::pow(10.0, k / 2.0) <= top * 1.0001; ++k)
    s.push_back(std::pow(10.0, k / 2.0));
  return s;
}

std::string leak_scale(double s) {
  return s == 0 ? "none" : sci(s, 1);
}

std::string weight_cell(double w) {
  return w == 0 ? "0" : std::isnan(w) ? "NaN" : sci(w);
}

void mask_part(const Config& cfg, RunContext& ctx, DocumentComparison& cmp) {
  const int64_t n = cfg.get_int("mask_keys"), masked = cfg.get_int("mask_masked");
  const std::vector<double> scales = half_decades(cfg.get_real("mask_max_scale"));
  const std::vector<MaskFill> fills = mask_fill_table(n, masked, scales);
  ctx.section("2. What a mask fill value leaks (004 §3.1), float32");
  std::vector<std::string> header = {"fill", "scores"};
  for (size_t i = 0; i < scales.size(); i += 2) header.push_back(sci(scales[i], 0));
  Table t(fmt::format("Weight on one masked position, {} keys of which {} masked, by logit scale "
                      "s (centred: visible scores over [-s, s]; negative: over [-s, -s/2])",
                      n, masked),
          header);
  for (const MaskFill& f : fills) {
    for (int regime = 0; regime < 2; ++regime) {
      const std::vector<double>& w = regime == 0 ? f.centred : f.negative;
      std::vector<std::string> row = {f.name, regime == 0 ? "centred" : "negative"};
      for (size_t i = 0; i < w.size(); i += 2) row.push_back(weight_cell(w[i]));
      t.add_row(row);
    }
  }
  ctx.table(t);
  Table full("A fully masked row (every key masked): the weight of each position",
             {"fill", "weight", "uniform 1/n"});
  for (const MaskFill& f : fills)
    full.add_row({f.name, weight_cell(f.fully_masked), fixed(1.0 / static_cast<double>(n), 4)});
  ctx.table(full);
  ctx.result("mask_scales", scales);
  for (const MaskFill& f : fills) {
    ctx.result(f.key + "_centred", f.centred);
    ctx.result(f.key + "_negative", f.negative);
    ctx.result(f.key + "_first_leak_negative", f.first_leak_negative);
    ctx.result(f.key + "_fully_masked", std::isnan(f.fully_masked) ? -1.0 : f.fully_masked);
  }
  const MaskFill &f9 = fills[1], &finf = fills[3];
  ctx.note(fmt::format(
      "A masked position's weight is e^(fill - m) / Z with m the largest visible score. In float32 "
      "it is exactly 0 unless fill - m > {:.2f}, so a fill leaks only when every visible score "
      "sits within ~104 of the fill. -1e9 first leaks at s = {} (negative scores, largest -s/2); "
      "beyond it the masked positions take nearly all the weight. A fully masked row gives the "
      "finite fills a uniform row and -inf a NaN row (0 / 0).",
      ln_half_denorm(), leak_scale(f9.first_leak_negative)));
  const double top_centred = scales.back();
  cmp.add_exact(fmt::format("3.1: the -1e9 fill leaves the masked positions a small nonzero weight "
                            "(float32, scores over [-s, s], s up to {})",
                            sci(top_centred, 0)),
                "yes", kit::yes_no(f9.leaks_centred),
                fmt::format("float32 e^(-1e9 - m) rounds to exactly 0 unless every visible score "
                            "is below -1e9 + 104 (first at s = {} with scores over [-s, -s/2])",
                            leak_scale(f9.first_leak_negative)));
  bool inf_zero = true;
  for (size_t i = 0; i < scales.size(); ++i)
    inf_zero = inf_zero && finf.centred[i] == 0 && finf.negative[i] == 0;
  cmp.add_exact("3.1: softmax turns a -inf fill into a weight of exactly 0 (every scale)", "yes",
                kit::yes_no(inf_zero));
}

void run(const Config& cfg, RunContext& ctx) {
  DocumentComparison cmp("004 §2.4, §3.1: softmax variants vs ours");
  log_softmax_part(cfg, ctx, cmp);
  mask_part(cfg, ctx, cmp);
  vocab_part(cfg, ctx, cmp);
  ctx.compare(cmp);
}

}  // namespace

Experiment softmax_variants() {
  Experiment e;
  e.name = "softmax-variants";
  e.source = "004 §2.4, §3.1";
  e.purpose = "Log-softmax vs log(softmax) at large logits, the -1e9 mask leak, adaptive softmax";
  e.config.add_int("classes", 32, "classes in the log-softmax row", {.min = 2, .max = 100000});
  e.config.add_real("max_scale", 1e4, "largest logit scale s of the log-softmax sweep",
                    {.min = 2, .max = 1e30});
  e.config.add_int("per_octave", 16, "scales per doubling in the log-softmax sweep",
                   {.min = 1, .max = 256});
  e.config.add_int("mask_keys", 16, "keys in the masked attention row", {.min = 2, .max = 4096});
  e.config.add_int("mask_masked", 4, "masked keys among them", {.min = 1, .max = 4095});
  e.config.add_real("mask_max_scale", 1e12, "largest score scale of the mask table",
                    {.min = 1, .max = 1e30});
  add_vocab_fields(e.config);
  e.quick = {{"vocab_sizes", "200,800"},
             {"steps", "40"},
             {"eval_size", "512"},
             {"time_reps", "3"},
             {"per_octave", "4"}};
  e.nondeterministic = {"times the three output layers", {"^speedup_", "cheaper per token"}};
  e.check = [](const Config& c) {
    if (c.get_int("mask_masked") >= c.get_int("mask_keys"))
      throw UsageError(fmt::format(
          "softmax-variants: --mask_masked {} must be below --mask_keys {} (a visible key)",
          c.get_int("mask_masked"), c.get_int("mask_keys")));
  };
  e.reference = true;  // its point is the computation: the elementary ops on the tape
  e.run = run;
  return e;
}

}  // namespace attn::experiments
