// Layer-table rows for the positional schemes that have parameters inside attention (no PyTorch
// module: tests/parity/check_positions.py writes T5's bucket function and the biased attention
// out in PyTorch).
//
//   t5_bias_attention  softmax(q k^T / sqrt(D) + T5 bias, causal or not) v, parameter `weight`
//                      (num_buckets, nhead) of nn::RelativePositionBias
// Inputs q (B,H,Tq,D), k and v (B,H,Tk,D) with Tq <= Tk (the queries are the last Tq positions);
// extra output "buckets": the (300,300) bucket table, row i column j for r = j - i, so PyTorch's
// bucket function is compared on every relative position from -299 to 299.
#include <memory>

#include "nn/attention/sdpa.h"
#include "nn/parity/table_helpers.h"
#include "nn/positional/t5_bias.h"

namespace attn::nn {

namespace {

ParityLayerSpec t5_bias_attention_spec() {
  ParityLayerSpec s;
  s.name = "t5_bias_attention";
  s.summary =
      "attention with T5's learned relative bias: nhead=2 bidirectional=true num_buckets=32 "
      "max_distance=128 causal=false; inputs q (B,H,Tq,D), k, v (B,H,Tk,D)";
  s.build = [](LayerConfig& c, Generator& gen) {
    auto m = std::make_shared<RelativePositionBias>(
        c.get_int("nhead", 2), c.get_bool("bidirectional", true), gen, c.get_int("num_buckets", 32),
        c.get_int("max_distance", 128));
    const bool causal = c.get_bool("causal", false);
    ParityLayer layer;
    layer.module = m;
    layer.forward = [m, causal](LayerInputs& in) {
      const Var q = in.input("q"), k = in.input("k"), v = in.input("v");
      SdpaOptions o;
      o.masks.causal = causal;
      o.masks.bias = m->forward(q.size(2), k.size(2));
      return scaled_dot_product_attention(q, k, v, o).out;
    };
    layer.extra_outputs = [m] { return TensorMap{{"buckets", m->buckets(300, 300)}}; };
    return layer;
  };
  // Small tables so that a few positions reach the exact, the log-spaced and the capped buckets.
  s.gradcheck_configs = {{"bidir", {{"num_buckets", "8"}, {"max_distance", "6"}}},
                         {"causal_step",
                          {{"bidirectional", "false"},
                           {"causal", "true"},
                           {"num_buckets", "4"},
                           {"max_distance", "4"},
                           {"tq", "2"}}}};
  s.make_inputs = [](LayerConfig& c, Generator& gen) {
    const int64_t h = c.get_int("nhead", 2), tk = 5, tq = c.get_int("tq", tk), d = 4;
    return TensorMap{{"q", Tensor::randn({2, h, tq, d}, gen)},
                     {"k", Tensor::randn({2, h, tk, d}, gen)},
                     {"v", Tensor::randn({2, h, tk, d}, gen)}};
  };
  return s;
}

}  // namespace

std::vector<ParityLayerSpec> position_parity_layers() {
  return {t5_bias_attention_spec()};
}

}  // namespace attn::nn
