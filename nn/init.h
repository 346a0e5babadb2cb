// Parameter initialisers with PyTorch's formulas (torch.nn.init), drawing from an explicit
// Generator so a seed fixes every weight of a model.
//
//   attn::Generator gen(0);
//   attn::Tensor w = attn::Tensor::empty({out, in});
//   attn::nn::init::kaiming_uniform_(w, gen, std::sqrt(5.0));   // what nn.Linear does
//   attn::nn::init::xavier_uniform_(w, gen);                      // what nn.MultiheadAttention
//   does attn::nn::init::zeros_(b);
//
// Tensors share storage, so each function fills the tensor it is given in place and returns it.
// The values are not the same numbers PyTorch draws (different generator), but they come from
// the same distributions, which is what training behaviour depends on.
#pragma once

#include <cstdint>
#include <utility>

#include "autograd/generator.h"
#include "autograd/tensor.h"

namespace attn::nn::init {

// fan_in / fan_out of a weight as PyTorch computes them: for a (out, in, k...) tensor,
// fan_in = in * receptive field, fan_out = out * receptive field. Needs rank >= 2.
std::pair<int64_t, int64_t> fan_in_and_fan_out(const Shape& shape);

enum class FanMode { kFanIn, kFanOut };
enum class Nonlinearity { kLinear, kSigmoid, kTanh, kRelu, kLeakyRelu };

// The recommended gain for a nonlinearity (torch.nn.init.calculate_gain): 1 for linear and
// sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + a^2)) for leaky relu with slope a.
double calculate_gain(Nonlinearity nonlinearity, double a = 0.01);

Tensor& uniform_(Tensor& t, Generator& gen, double lo = 0.0, double hi = 1.0);  // U[lo, hi)
Tensor& normal_(Tensor& t, Generator& gen, double mean = 0.0, double std = 1.0);
Tensor& constant_(Tensor& t, double value);
Tensor& zeros_(Tensor& t);
Tensor& ones_(Tensor& t);

// U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio 2010).
Tensor& xavier_uniform_(Tensor& t, Generator& gen, double gain = 1.0);
// N(0, s^2) with s = gain * sqrt(2 / (fan_in + fan_out)).
Tensor& xavier_normal_(Tensor& t, Generator& gen, double gain = 1.0);
// U(-b, b) with b = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a) (He et al. 2015).
// nn.Linear calls it with a = sqrt(5) and leaky relu, which works out to b = 1 / sqrt(fan_in).
Tensor& kaiming_uniform_(Tensor& t,
                         Generator& gen,
                         double a = 0.0,
                         FanMode mode = FanMode::kFanIn,
                         Nonlinearity nonlinearity = Nonlinearity::kLeakyRelu);
// N(0, s^2) with s = gain / sqrt(fan).
Tensor& kaiming_normal_(Tensor& t,
                        Generator& gen,
                        double a = 0.0,
                        FanMode mode = FanMode::kFanIn,
                        Nonlinearity nonlinearity = Nonlinearity::kLeakyRelu);

// nn.Linear's defaults as fresh tensors: weight (out, in) kaiming_uniform_(a = sqrt(5)), bias
// (out) U(-1/sqrt(in), 1/sqrt(in)).
Tensor linear_weight(int64_t out_features, int64_t in_features, Generator& gen);
Tensor linear_bias(int64_t out_features, int64_t in_features, Generator& gen);

}  // namespace attn::nn::init
