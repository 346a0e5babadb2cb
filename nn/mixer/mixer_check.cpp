#include "nn/mixer/mixer_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/shape.h"
#include "autograd/tape.h"

namespace attn::nn {

namespace {

constexpr int64_t kBatch = 2, kLen = 6;
constexpr int kDirections = 4;
constexpr double kSteps[] = {1e-2, 5e-3, 2.5e-3};

struct Probe {
  Mixer mixer;
  std::vector<Var> leaves;  // x first, then the mixer's parameters
  Tensor w;                 // the loss weights, (B,T,d)
};

// L = sum(w * mixer(x)) in double, without recording; also sum |w y| (the rounding floor's scale).
double loss(const Probe& p, double* magnitude = nullptr) {
  NoGrad off;
  const Tensor y = p.mixer.forward(p.leaves[0]).value();
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

MixerCheck check_mixer_gradient(const MixerRow& row, uint64_t seed) {
  const MixerShape shape{.d_model = 8, .nhead = 2, .max_len = 8, .layers = 1, .window = 2};
  Generator gen(seed);
  Probe p{row.make(shape, 0, gen), {}, Tensor::randn({kBatch, kLen, shape.d_model}, gen)};
  if (p.mixer.module) p.mixer.module->eval();  // dropout off: the loss must be a function
  p.leaves.push_back(Var::parameter(Tensor::randn({kBatch, kLen, shape.d_model}, gen)));
  if (p.mixer.module)
    for (const Var& param : p.mixer.module->parameters()) p.leaves.push_back(param);

  // Analytic gradient: one backward pass with upstream gradient w.
  tape().clear();
  for (Var& leaf : p.leaves) leaf.zero_grad();
  const Var y = p.mixer.forward(p.leaves[0]);
  if (y.shape() != p.w.shape())
    return {false, 0,
            fmt::format("mixer '{}' maps (2,6,8) to {}: a mixer returns its input's shape",
                        row.name, shape_str(y.shape()))};
  if (y.requires_grad()) y.backward(p.w);
  tape().clear();

  double magnitude = 0;
  const double l0 = loss(p, &magnitude);
  if (loss(p) != l0)
    return {false, 0,
            fmt::format("mixer '{}' gives two outputs for one input: its forward must "
                        "be deterministic in eval mode",
                        row.name)};
  const double floor = std::numeric_limits<float>::epsilon() * magnitude / kSteps[2];
  MixerCheck out{true, 0, ""};
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
