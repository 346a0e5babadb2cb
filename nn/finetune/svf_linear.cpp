#include "nn/finetune/svf_linear.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/linalg/svd.h"

namespace attn::nn {

SvfLinear::SvfLinear(const Linear& base)
    : Module("SvfLinear"),
      in_(base.in_features()),
      out_(base.out_features()),
      k_(std::min(base.in_features(), base.out_features())),
      has_bias_(base.has_bias()) {
  const linalg::Svd d = linalg::svd(base.weight.value());  // (out, in) = u diag(s) v^T
  u_ = register_buffer("u", d.u);
  s_ = register_buffer("s", d.s);
  v_ = register_buffer("v", d.v);
  if (has_bias_) bias_ = register_buffer("bias", base.bias.value().clone());
  z = register_parameter("z", Tensor::ones({k_}));
}

Var SvfLinear::forward(const Var& x) const {
  return forward_with(x, z);
}

Var SvfLinear::forward_with(const Var& x, const Var& zv) const {
  if (x.rank() < 2 || x.size(x.rank() - 1) != in_)
    throw Error(
        fmt::format("SvfLinear: input must be (..., {}), got {}", in_, shape_str(x.shape())));
  if (zv.rank() != 1 || zv.size(0) != k_)
    throw Error(fmt::format("SvfLinear: z must be ({}), got {}", k_, shape_str(zv.shape())));
  // (..., in) (in, k) -> (..., k): the input's coordinates along the right singular vectors.
  const Var coords = matmul(x, Var::constant(v_));
  // Each coordinate scaled by its singular value times z: diag(s ⊙ z).
  const Var scaled = mul(coords, mul(Var::constant(s_), zv));
  // (..., k) (out, k)^T -> (..., out): back along the left singular vectors.
  const Var y = matmul(scaled, Var::constant(u_), false, true);
  return has_bias_ ? add(y, Var::constant(bias_)) : y;
}

}  // namespace attn::nn
