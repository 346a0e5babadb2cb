#include "experiments/common/scan_agreement.h"

#include "experiments/kit/kit.h"
#include "nn/ssm/selective_ssm.h"

namespace attn::experiments {

namespace {

struct ScanAgreement {
  double output_diff = 0, gradient_diff = 0;
  double output_scale = 0, gradient_scale = 0;  // max |y|, max |g| (what the differences are of)
  double sequential_ms = 0, chunked_ms = 0;     // median forward + backward
};

double largest_magnitude(const Tensor& a) {
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(static_cast<double>(a[i])));
  return m;
}

double largest_difference(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) throw Error("compare_scans: the two scans' shapes differ");
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    m = std::max(m, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  return m;
}

// One forward + backward of loss = sum(y * w); returns y. Gradients land in x and the layer.
Tensor forward_backward(const nn::SelectiveSSM& layer, const Var& x, const Var& w) {
  const Var y = layer.forward(x);
  Tensor out = y.value();
  sum(mul(y, w)).backward();
  return out;
}

ScanAgreement compare_scans(int64_t d_model,
                            nn::SelectiveSsmOptions options,
                            int64_t batch,
                            int64_t t,
                            uint64_t seed,
                            int reps) {
  Generator init_a(seed), init_b(seed), data(seed + 1);
  options.scan = nn::SsmScan::kSequential;
  nn::SelectiveSSM sequential(d_model, init_a, options);
  options.scan = nn::SsmScan::kChunked;
  nn::SelectiveSSM chunked(d_model, init_b, options);
  const auto pa = sequential.named_parameters(), pb = chunked.named_parameters();
  for (size_t i = 0; i < pa.size(); ++i)
    if (largest_difference(pa[i].second.value(), pb[i].second.value()) != 0)
      throw Error("compare_scans: the two layers' parameters differ");
  const Tensor x_value = Tensor::randn({batch, t, d_model}, data);
  const Var w = Var::constant(Tensor::randn({batch, t, d_model}, data));
  Var xa = Var::parameter(x_value), xb = Var::parameter(x_value.clone());

  sequential.zero_grad();
  chunked.zero_grad();
  const Tensor ya = forward_backward(sequential, xa, w), yb = forward_backward(chunked, xb, w);
  ScanAgreement r;
  r.output_diff = largest_difference(ya, yb);
  r.output_scale = largest_magnitude(ya);
  r.gradient_diff = largest_difference(xa.grad(), xb.grad());
  r.gradient_scale = largest_magnitude(xa.grad());
  for (size_t i = 0; i < pa.size(); ++i) {
    r.gradient_diff =
        std::max(r.gradient_diff, largest_difference(pa[i].second.grad(), pb[i].second.grad()));
    r.gradient_scale = std::max(r.gradient_scale, largest_magnitude(pa[i].second.grad()));
  }
  const std::vector<Timing> tm = time_interleaved({[&] {
                                                     sequential.zero_grad();
                                                     forward_backward(sequential, xa, w);
                                                   },
                                                   [&] {
                                                     chunked.zero_grad();
                                                     forward_backward(chunked, xb, w);
                                                   }},
                                                  reps, 4.0);
  r.sequential_ms = 1e3 * tm[0].median_s;
  r.chunked_ms = 1e3 * tm[1].median_s;
  return r;
}

}  // namespace

ScanResult scan_part(const Config& cfg, RunContext& ctx) {
  const std::vector<int64_t> lengths = cfg.get_ints("scan_lengths");
  const int64_t d = cfg.get_int("d_model"), b = cfg.get_int("scan_batch");
  const nn::SelectiveSsmOptions o{.d_state = cfg.get_int("d_state"), .chunk = cfg.get_int("chunk")};
  ctx.section(fmt::format(
      "Part 2: nn::SelectiveSSM (d_model {}, N = {}), sequential tape scan vs fused chunked scan "
      "(chunk {}), batch {}",
      d, o.d_state, o.chunk, b));
  Table t("Outputs and gradients of loss = sum(y * w), and one forward + backward (median)",
          {"T", "max |dy|", "max |y|", "max |dgrad|", "max |grad|", "sequential ms", "chunked ms",
           "sequential / chunked"});
  CsvWriter csv = ctx.csv("scans", {"T", "output_diff", "output_scale", "gradient_diff",
                                    "gradient_scale", "sequential_ms", "chunked_ms"});
  ScanResult r;
  for (int64_t T : lengths) {
    const ScanAgreement a =
        compare_scans(d, o, b, T, ctx.seed() + 53, static_cast<int>(cfg.get_int("scan_reps")));
    r.ts.push_back(static_cast<double>(T));
    r.sequential_ms.push_back(a.sequential_ms);
    r.chunked_ms.push_back(a.chunked_ms);
    r.output_diff = std::max(r.output_diff, a.output_diff / a.output_scale);
    r.gradient_diff = std::max(r.gradient_diff, a.gradient_diff / a.gradient_scale);
    t.add_row({std::to_string(T), fmt::format("{:.2g}", a.output_diff),
               fmt::format("{:.3g}", a.output_scale), fmt::format("{:.2g}", a.gradient_diff),
               fmt::format("{:.3g}", a.gradient_scale), fixed(a.sequential_ms, 2),
               fixed(a.chunked_ms, 2), fixed(a.sequential_ms / a.chunked_ms, 1)});
    csv.row({r.ts.back(), a.output_diff, a.output_scale, a.gradient_diff, a.gradient_scale,
             a.sequential_ms, a.chunked_ms});
  }
  ctx.table(t);
  r.chunked_slope = log_log_slope(r.ts, r.chunked_ms, r.ts[r.ts.size() - 2]);
  r.sequential_slope = log_log_slope(r.ts, r.sequential_ms, r.ts[r.ts.size() - 2]);
  ctx.result("scan_lengths", lengths);
  ctx.result("scan_sequential_ms", r.sequential_ms);
  ctx.result("scan_chunked_ms", r.chunked_ms);
  ctx.result("scan_output_relative_diff", r.output_diff);
  ctx.result("scan_gradient_relative_diff", r.gradient_diff);
  ctx.result("scan_chunked_time_slope", r.chunked_slope);
  ctx.result("scan_sequential_time_slope", r.sequential_slope);
  ctx.result("load_average", load_average());
  ctx.note(fmt::format(
      "The two scans compute one recurrence in different orders: the largest difference is {:.2g} "
      "of the outputs' size and {:.2g} of the gradients' (float32 rounding). At T = {:.0f} the "
      "sequential tape scan takes {:.3g} ms and the chunked one {:.3g} ms (x{:.1f}); from T = "
      "{:.0f} to {:.0f} the chunked time grows like T^{:.2f} (the sequential like T^{:.2f}); the "
      "recurrence's operation count is linear in T. "
      "1-minute load average: {:.2f} (the two alternate, so outside load slows both alike).",
      r.output_diff, r.gradient_diff, r.ts.back(), r.sequential_ms.back(), r.chunked_ms.back(),
      r.sequential_ms.back() / r.chunked_ms.back(), r.ts[r.ts.size() - 2], r.ts.back(),
      r.chunked_slope, r.sequential_slope, load_average()));
  LinePlot p =
      kit::line_plot("S6: one forward + backward, sequential tape scan vs fused chunked scan",
                     "sequence length T", "ms (median)", kit::Axes::kLogLog);
  p.series = {{"sequential (reference)", r.ts, r.sequential_ms},
              {"chunked (fast)", r.ts, r.chunked_ms}};
  ctx.figure("scan_time", line_plot_svg(p), "S6 forward + backward time against T, log-log");
  return r;
}

}  // namespace attn::experiments
