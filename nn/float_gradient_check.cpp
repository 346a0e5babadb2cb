#include "nn/float_gradient_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/shape.h"
#include "autograd/tape.h"

namespace attn::nn {

namespace {

constexpr int kDirections = 4;
constexpr double kSteps[] = {1e-2, 5e-3, 2.5e-3};

struct Probe {
  const std::function<Var(const Var&)>& f;
  std::vector<Var> leaves;  // x first, then the layer's parameters
  Tensor w;                 // the loss weights, x's shape
};

// L = sum(w * f(x)) in double, without recording; also sum |w y| (the rounding floor's scale).
double loss(const Probe& p, double* magnitude = nullptr) {
  NoGrad off;
  const Tensor y = p.f(p.leaves[0]).value();
  double l = 0, m = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    l += double(p.w[i]) * double(y[i]);
    m += std::abs(double(p.w[i]) * double(y[i]));
  }
  if (magnitude) *magnitude = m;
  return l;
}

// Moves every leaf by s * v (v: one tensor per leaf).
void shift(Probe& p, const std::vector<Tensor>& v, double s) {
  for (size_t l = 0; l < p.leaves.size(); ++l) {
    real* x = p.leaves[l].value().data();
    for (int64_t i = 0; i < v[l].numel(); ++i) x[i] += static_cast<real>(s * double(v[l][i]));
  }
}

// A random direction over all leaves with unit Euclidean norm.
std::vector<Tensor> direction(const Probe& p, Generator& gen) {
  std::vector<Tensor> v;
  double norm2 = 0;
  for (const Var& leaf : p.leaves) {
    v.push_back(Tensor::randn(leaf.shape(), gen));
    for (int64_t i = 0; i < v.back().numel(); ++i) norm2 += double(v.back()[i]) * v.back()[i];
  }
  const double scale = 1.0 / std::sqrt(norm2);
  for (Tensor& t : v)
    for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<real>(t[i] * scale);
  return v;
}

// (L(p + h v) - L(p - h v)) / 2h; restores the leaves exactly afterwards.
double central_difference(Probe& p, const std::vector<Tensor>& v, double h) {
  std::vector<Tensor> saved;
  for (const Var& leaf : p.leaves) saved.push_back(leaf.value().clone());
  shift(p, v, h);
  const double up = loss(p);
  for (size_t l = 0; l < p.leaves.size(); ++l) p.leaves[l].value().copy_from(saved[l]);
  shift(p, v, -h);
  const double down = loss(p);
  for (size_t l = 0; l < p.leaves.size(); ++l) p.leaves[l].value().copy_from(saved[l]);
  return (up - down) / (2 * h);
}

}  // namespace

FloatGradientCheck check_float_gradient(const std::function<Var(const Var&)>& f,
                                        const std::vector<Var>& parameters,
                                        const Shape& x_shape,
                                        Generator& gen,
                                        const std::string& what) {
  Probe p{f, {}, Tensor::randn(x_shape, gen)};
  p.leaves.push_back(Var::parameter(Tensor::randn(x_shape, gen)));
  for (const Var& param : parameters) p.leaves.push_back(param);

  // Analytic gradient: one backward pass with upstream gradient w.
  tape().clear();
  for (Var& leaf : p.leaves) leaf.zero_grad();
  const Var y = f(p.leaves[0]);
  if (y.shape() != p.w.shape()) {
    FloatGradientCheck wrong{false, 0,
                             fmt::format("{} maps {} to {}: a layer checked here returns its "
                                         "input's shape",
                                         what, shape_str(x_shape), shape_str(y.shape())),
                             true};
    tape().clear();
    return wrong;
  }
  if (y.requires_grad()) y.backward(p.w);
  tape().clear();

  double magnitude = 0;
  const double l0 = loss(p, &magnitude);
  if (loss(p) != l0)
    return {false, 0,
            fmt::format("{} gives two outputs for one input: its forward must be "
                        "deterministic in eval mode",
                        what)};
  const double floor = std::numeric_limits<float>::epsilon() * magnitude / kSteps[2];
  FloatGradientCheck out{true, 0, "", false};
  for (int k = 0; k < kDirections; ++k) {
    const std::vector<Tensor> v = direction(p, gen);
    double a = 0;
    for (size_t l = 0; l < p.leaves.size(); ++l)
      if (p.leaves[l].has_grad())
        for (int64_t i = 0; i < v[l].numel(); ++i) a += double(p.leaves[l].grad()[i]) * v[l][i];
    double n[3];
    for (int s = 0; s < 3; ++s) n[s] = central_difference(p, v, kSteps[s]);
    const double spread = *std::max_element(n, n + 3) - *std::min_element(n, n + 3);
    const double tolerance = 2 * spread + floor;
    const double ratio = std::abs(a - n[1]) / tolerance;
    if (ratio >= out.worst_ratio) {
      out.worst_ratio = ratio;
      out.detail = fmt::format(
          "direction {}: analytic {:.6g}, numeric {:.6g} (h = {}, {}, {}: {:.6g} {:.6g} {:.6g}), "
          "|difference| {:.3g} vs tolerance {:.3g}",
          k, a, n[1], kSteps[0], kSteps[1], kSteps[2], n[0], n[1], n[2], std::abs(a - n[1]),
          tolerance);
    }
  }
  out.ok = out.worst_ratio <= 1;
  return out;
}

}  // namespace attn::nn
