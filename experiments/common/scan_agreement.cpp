#include "experiments/common/scan_agreement.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "experiments/common/interleaved_timing.h"

namespace attn::experiments {

namespace {

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

}  // namespace

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

}  // namespace attn::experiments
