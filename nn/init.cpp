#include "nn/init.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"

namespace attn::nn::init {

std::pair<int64_t, int64_t> fan_in_and_fan_out(const Shape& shape) {
  if (shape.size() < 2)
    throw Error(
        fmt::format("init: fan in/out needs a tensor of rank >= 2, got {}", shape_str(shape)));
  int64_t receptive = 1;
  for (size_t i = 2; i < shape.size(); ++i) receptive *= shape[i];
  return {shape[1] * receptive, shape[0] * receptive};
}

double calculate_gain(Nonlinearity nonlinearity, double a) {
  switch (nonlinearity) {
    case Nonlinearity::kLinear:
    case Nonlinearity::kSigmoid:
      return 1.0;
    case Nonlinearity::kTanh:
      return 5.0 / 3.0;
    case Nonlinearity::kRelu:
      return std::sqrt(2.0);
    case Nonlinearity::kLeakyRelu:
      return std::sqrt(2.0 / (1.0 + a * a));
  }
  return 1.0;
}

Tensor& uniform_(Tensor& t, Generator& gen, double lo, double hi) {
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<real>(lo + (hi - lo) * gen.uniform());
  return t;
}

Tensor& normal_(Tensor& t, Generator& gen, double mean, double std) {
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<real>(mean + std * gen.normal());
  return t;
}

Tensor& constant_(Tensor& t, double value) {
  t.fill(static_cast<real>(value));
  return t;
}

Tensor& zeros_(Tensor& t) {
  return constant_(t, 0.0);
}

Tensor& ones_(Tensor& t) {
  return constant_(t, 1.0);
}

Tensor& xavier_uniform_(Tensor& t, Generator& gen, double gain) {
  const auto [fan_in, fan_out] = fan_in_and_fan_out(t.shape());
  const double bound = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return uniform_(t, gen, -bound, bound);
}

Tensor& xavier_normal_(Tensor& t, Generator& gen, double gain) {
  const auto [fan_in, fan_out] = fan_in_and_fan_out(t.shape());
  return normal_(t, gen, 0.0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

namespace {
double kaiming_std(const Tensor& t, double a, FanMode mode, Nonlinearity nonlinearity) {
  const auto [fan_in, fan_out] = fan_in_and_fan_out(t.shape());
  const int64_t fan = mode == FanMode::kFanIn ? fan_in : fan_out;
  if (fan == 0) throw Error("init: kaiming initialisation of a tensor with zero fan");
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}
}  // namespace

Tensor& kaiming_uniform_(
    Tensor& t, Generator& gen, double a, FanMode mode, Nonlinearity nonlinearity) {
  // A uniform U(-b, b) has standard deviation b / sqrt(3).
  const double bound = std::sqrt(3.0) * kaiming_std(t, a, mode, nonlinearity);
  return uniform_(t, gen, -bound, bound);
}

Tensor& kaiming_normal_(
    Tensor& t, Generator& gen, double a, FanMode mode, Nonlinearity nonlinearity) {
  return normal_(t, gen, 0.0, kaiming_std(t, a, mode, nonlinearity));
}

Tensor linear_weight(int64_t out_features, int64_t in_features, Generator& gen) {
  Tensor w = Tensor::empty({out_features, in_features});
  return kaiming_uniform_(w, gen, std::sqrt(5.0));
}

Tensor linear_bias(int64_t out_features, int64_t in_features, Generator& gen) {
  Tensor b = Tensor::empty({out_features});
  const double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
  return uniform_(b, gen, -bound, bound);
}

}  // namespace attn::nn::init
