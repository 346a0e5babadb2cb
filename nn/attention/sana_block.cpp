#include "nn/attention/sana_block.h"

#include "autograd/functional.h"

namespace attn::nn {

Var causal_depthwise_conv(const Var& x, const Var& w) {
  const int64_t b = x.size(0), t = x.size(1), c = x.size(2), taps = w.size(0);
  Var y;
  for (int64_t j = 0; j < taps && j < t; ++j) {
    // x shifted j steps later in time: j zero rows, then x_0 .. x_{T-1-j}.
    const Var shifted =
        j == 0 ? x : concat({Var::constant(Tensor::zeros({b, j, c})), slice(x, 1, 0, t - j)}, 1);
    const Var term = mul(shifted, reshape(slice(w, 0, j, j + 1), {c}));
    y = j == 0 ? term : add(y, term);
  }
  return y;
}

SanaBlock::SanaBlock(int64_t d_model, int64_t nhead, int64_t hidden, Generator& gen)
    : Module("SanaBlock"), hidden_(hidden) {
  attn = register_module(
      "attn", std::make_shared<ProjectedAttention>("ReluLinearAttention", d_model, nhead, gen));
  ffn_norm = register_module("ffn_norm", std::make_shared<LayerNorm>(d_model));
  up = register_module("up", std::make_shared<Linear>(d_model, 2 * hidden, true, gen));
  down = register_module("down", std::make_shared<Linear>(hidden, d_model, true, gen));
  // A depthwise kernel starts near the identity tap (x_t) with small neighbours, so the block
  // begins as a plain gated feed-forward and learns how much of the past to mix in.
  Tensor w = Tensor::randn({kTaps, 2 * hidden}, gen);
  for (int64_t i = 0; i < w.numel(); ++i) w[i] = static_cast<real>(0.1 * w[i] + (i < 2 * hidden));
  conv_weight = register_parameter("conv_weight", w);
  conv_bias = register_parameter("conv_bias", Tensor::zeros({2 * hidden}));
}

Var SanaBlock::attention(const Var& h) const {
  const HeadsQKV a = attn->project(h);
  return attn->combine(causal_linear_attention(relu(a.q), relu(a.k), a.v));
}

Var SanaBlock::forward(const Var& h) const {
  const Var u = attention(h);
  const Var z = up->forward(ffn_norm->forward(add(h, u)));
  const Var c = add(causal_depthwise_conv(z, conv_weight), conv_bias);
  const Var gated = mul(silu(slice(c, -1, 0, hidden_)), slice(c, -1, hidden_, 2 * hidden_));
  return add(u, down->forward(gated));
}

}  // namespace attn::nn
