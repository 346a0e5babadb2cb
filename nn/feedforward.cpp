#include "nn/feedforward.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/mode.h"
#include "autograd/ops/fused/fused_dropout.h"

namespace attn::nn {

Activation activation_from_name(const std::string& name) {
  if (name == "relu") return Activation::kReLU;
  if (name == "gelu") return Activation::kGELU;
  if (name == "gelu_tanh") return Activation::kGELUTanh;
  if (name == "swiglu") return Activation::kSwiGLU;
  throw Error(fmt::format("unknown activation '{}' (relu, gelu, gelu_tanh, swiglu)", name));
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::kReLU:
      return "relu";
    case Activation::kGELU:
      return "gelu";
    case Activation::kGELUTanh:
      return "gelu_tanh";
    case Activation::kSwiGLU:
      return "swiglu";
  }
  return "?";
}

Var activate(const Var& x, Activation a) {
  switch (a) {
    case Activation::kReLU:
      return relu(x);
    case Activation::kGELU:
      return gelu(x, GeluApprox::kNone);
    case Activation::kGELUTanh:
      return gelu(x, GeluApprox::kTanh);
    case Activation::kSwiGLU:
      break;
  }
  throw Error("activate: swiglu is a gated block (FeedForward with Activation::kSwiGLU)");
}

Var feed_forward(const Var& x,
                 const Linear& linear1,
                 const Linear& linear2,
                 Activation act,
                 const Dropout& dropout) {
  // ReLU rides in the first layer's op (linear_relu); a GELU in the second layer's
  // (gelu_linear), and in the fast path the dropout between them too (the same draw and mask
  // as the Dropout module's; autograd/ops/fused/fused_dropout.h).
  const bool gelu = act == Activation::kGELU || act == Activation::kGELUTanh;
  const bool dropping = dropout.p() > 0 && dropout.is_training();
  const GeluApprox approx = act == Activation::kGELU ? GeluApprox::kNone : GeluApprox::kTanh;
  if (gelu && !dropping) return linear2.forward_after_gelu(linear1.forward(x), approx);
  if (gelu && !reference_mode())
    return gelu_linear(linear1.forward(x), linear2.weight,
                       linear2.has_bias() ? std::optional<Var>(linear2.bias) : std::nullopt, approx,
                       {.p = static_cast<real>(dropout.p()), .gen = dropout.generator().get()});
  const Var hidden =
      act == Activation::kReLU ? linear1.forward_relu(x) : activate(linear1.forward(x), act);
  return linear2.forward(dropout.forward(hidden));
}

FeedForward::FeedForward(int64_t d_model,
                         int64_t d_ff,
                         Activation activation,
                         Generator& gen,
                         bool bias,
                         double dropout_p,
                         std::shared_ptr<Generator> dropout_gen)
    : Module("FeedForward"), act_(activation) {
  if (act_ == Activation::kSwiGLU) {
    w1 = register_module("w1", std::make_shared<Linear>(d_model, d_ff, bias, gen));
    w2 = register_module("w2", std::make_shared<Linear>(d_ff, d_model, bias, gen));
    w3 = register_module("w3", std::make_shared<Linear>(d_model, d_ff, bias, gen));
  } else {
    linear1 = register_module("linear1", std::make_shared<Linear>(d_model, d_ff, bias, gen));
    linear2 = register_module("linear2", std::make_shared<Linear>(d_ff, d_model, bias, gen));
  }
  dropout =
      register_module("dropout", std::make_shared<Dropout>(dropout_p, std::move(dropout_gen)));
}

Var FeedForward::forward(const Var& x) const {
  if (act_ != Activation::kSwiGLU) return feed_forward(x, *linear1, *linear2, act_, *dropout);
  // silu(w1 x) decides how much of each of the d_ff values w3 x passes: a learned gate.
  return w2->forward(dropout->forward(mul(silu(w1->forward(x)), w3->forward(x))));
}

}  // namespace attn::nn
