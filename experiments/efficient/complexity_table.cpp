#include "experiments/efficient/complexity_table.h"

#include <cmath>

#include "autograd/functional.h"
#include "autograd/mode.h"
#include "autograd/tape.h"
#include "experiments/kit/kit.h"
#include "nn/attention/sdpa.h"
#include "nn/gradient_probe.h"
#include "nn/rnn/recurrent.h"
#include "nn/ssm/causal_conv1d.h"

namespace attn::experiments {

namespace {

constexpr int64_t kWidth = 16;  // channels of every probed layer (the counts do not depend on it)

// The ops one forward of `layer` records on this thread's tape, for an input (1,T,kWidth).
size_t recorded_ops(int64_t t, const std::function<Var(const Var&)>& layer) {
  Generator gen(7);
  tape().clear();
  const Var x = Var::parameter(Tensor::randn({1, t, kWidth}, gen));
  layer(x);
  const size_t n = tape().size();
  tape().clear();
  return n;
}

// x (1,T,C) delayed by s steps along time, zeros first: out_t = x_{t-s}.
Var delayed(const Var& x, int64_t s) {
  const int64_t t = x.size(1);
  if (s == 0) return x;
  if (s >= t) return Var::constant(Tensor::zeros({1, t, x.size(2)}));
  return concat({Var::constant(Tensor::zeros({1, s, x.size(2)})), slice(x, 1, 0, t - s)}, 1);
}

// A causal convolution with every tap 1: out_t = sum_{j<k} x_{t - j*dilation}. All-positive
// weights cannot cancel, so a gradient reaches exactly the positions inside the receptive field.
Var causal_conv_ones(const Var& x, int64_t kernel, int64_t dilation) {
  Var y = x;
  for (int64_t j = 1; j < kernel; ++j) y = add(y, delayed(x, j * dilation));
  return y;
}

// Does a stack of `depth` layers let the output at T-1 depend on input 0? By backward.
bool reaches_first(int64_t t, int64_t depth, const std::function<Var(const Var&, int64_t)>& layer) {
  Generator gen(11);
  const Tensor x = Tensor::randn({1, t, kWidth}, gen);
  const Tensor u = Tensor::ones({1, kWidth});
  const nn::GradientProbe p = nn::probe_gradient_flow(x, [&](const Var& xv) {
    Var h = xv;
    for (int64_t l = 0; l < depth; ++l) h = layer(h, l);
    return nn::readout_loss(h, t - 1, u);
  });
  return p.norms[0] > 0;
}

// The fewest layers whose stack reaches input 0 from output T-1 (T if none up to T does).
int64_t path_length(int64_t t, const std::function<Var(const Var&, int64_t)>& layer) {
  for (int64_t depth = 1; depth < t; ++depth)
    if (reaches_first(t, depth, layer)) return depth;
  return t;
}

// One head of self-attention over x (1,T,C) with Q = K = V = x.
Var self_attention(const Var& x) {
  const Var h = reshape(x, {1, 1, x.size(1), x.size(2)});
  return reshape(nn::scaled_dot_product_attention(h, h, h).out, {1, x.size(1), x.size(2)});
}

double growth_exponent(double small, double large, int64_t t1, int64_t t2) {
  return std::log(large / small) / std::log(static_cast<double>(t2) / static_cast<double>(t1));
}

// ---- complexity per layer: FLOPs counted on the tape ------------------------------------------

// The FLOPs of the products one forward of `layer` records (Tape::forward_flops), for an input
// (1,T,d), on the reference path, where every product is a matmul, linear or recurrent step.
double counted_flops(int64_t t, int64_t d, const std::function<Var(const Var&)>& layer) {
  ReferenceModeScope textbook(true);
  Generator gen(5);
  tape().clear();
  layer(Var::parameter(Tensor::randn({1, t, d}, gen)));
  const double flops = tape().forward_flops();
  tape().clear();
  return flops;
}

// A dense causal convolution written as the sum of its taps: y_t = sum_{j<k} x_{t-j} W_j^T,
// each tap a (d,d) matrix, so k products of (T,d) x (d,d): 2 k T d^2 FLOPs.
Var dense_causal_conv(const Var& x, int64_t kernel) {
  Generator gen(9);
  const int64_t d = x.size(2);
  Var y;
  for (int64_t j = 0; j < kernel; ++j) {
    const Var tap = matmul(delayed(x, j), Var::constant(Tensor::randn({d, d}, gen)), false, true);
    y = j == 0 ? tap : add(y, tap);
  }
  return y;
}

// One recurrent layer of width d: x W_ih^T for every step, then T steps of h W_hh^T.
Var recurrent_layer(const Var& x) {
  Generator gen(13);
  const int64_t d = x.size(2);
  nn::RNN rnn({.input_size = d, .hidden_size = d, .batch_first = true}, gen);
  return rnn.forward(x).y;
}

struct CostedLayer {
  std::string name, order;           // "recurrent", "T d^2"
  double t_order, d_order, k_order;  // the document's exponents (k: 0 where k plays no part)
  std::function<Var(const Var&, int64_t)> forward;  // (x, kernel)
};

// The exponents of one layer's counted FLOPs in T, in d and in k, each from two sizes with the
// other two held at (T, d, k) = (128, 16, 3).
struct CountedOrders {
  double base, t, d, k;
};

CountedOrders counted_orders(const CostedLayer& layer) {
  const int64_t t1 = 128, t2 = 512, d1 = 16, d2 = 64, k1 = 3, k2 = 12;
  auto flops = [&](int64_t t, int64_t d, int64_t k) {
    return counted_flops(t, d, [&](const Var& x) { return layer.forward(x, k); });
  };
  const double base = flops(t1, d1, k1);
  return {base, growth_exponent(base, flops(t2, d1, k1), t1, t2),
          growth_exponent(base, flops(t1, d2, k1), d1, d2),
          growth_exponent(base, flops(t1, d1, k2), k1, k2)};
}

// 000 §5.1 and 002 §39.3: the per-layer cost orders, as exponents of the counted FLOPs.
void per_layer_costs(RunContext& ctx) {
  const std::vector<CostedLayer> layers{
      {"recurrent", "T d^2", 1, 2, 0, [](const Var& x, int64_t) { return recurrent_layer(x); }},
      {"self-attention", "T^2 d", 2, 1, 0, [](const Var& x, int64_t) { return self_attention(x); }},
      {"convolution", "k T d^2", 1, 2, 1, dense_causal_conv}};
  ctx.section("Complexity per layer: the products' FLOPs, counted on the tape");
  Table tab("FLOPs of one layer's forward at T = 128, d = 16, k = 3, and their growth exponents",
            {"layer", "document", "FLOPs", "exponent in T", "exponent in d", "exponent in k"});
  DocumentComparison cmp("000 §5.1 and 002 §39.3: complexity per layer, counted");
  for (const CostedLayer& layer : layers) {
    const CountedOrders o = counted_orders(layer);
    tab.add_row({layer.name, "O(" + layer.order + ")", sig(o.base, 4), fixed(o.t, 3), fixed(o.d, 3),
                 fixed(o.k, 3)});
    const std::string key = layer.name == "self-attention" ? "attention" : layer.name;
    kit::record(ctx, {{"flops_exponent_t_" + key, o.t},
                      {"flops_exponent_d_" + key, o.d},
                      {"flops_exponent_k_" + key, o.k}});
    // Neighbouring orders differ by 1 in an exponent: the tolerance is a tenth of that.
    const std::string what = fmt::format("{} layer: O({})", layer.name, layer.order);
    // The counts are exact, so an exponent equal to the table's is the expected result.
    cmp.add(what + ", exponent in T", layer.t_order, o.t, 0.1).exact_quantity();
    cmp.add(what + ", exponent in d", layer.d_order, o.d, 0.1).exact_quantity();
    cmp.add(what + ", exponent in k", layer.k_order, o.k, 0.1).exact_quantity();
  }
  ctx.table(tab);
  ctx.compare(cmp);
}

}  // namespace

void add_complexity_fields(Config& config) {
  config.add_int("path_t", 64, "sequence length of the path-length measurement", {.min = 4})
      .add_int("conv_kernel", 3, "kernel k of the convolution rows", {.min = 2});
}

double attention_product_flops(int64_t t, int64_t d) {
  return counted_flops(t, d, self_attention);
}

double recurrent_product_flops(int64_t t, int64_t d) {
  return counted_flops(t, d, recurrent_layer);
}

void complexity_table(const Config& cfg, RunContext& ctx) {
  const int64_t t = cfg.get_int("path_t"), k = cfg.get_int("conv_kernel");
  const int64_t t1 = 256, t2 = 1024;
  ctx.section("002 §39.3's table, measured: sequential operations and maximum path length");
  Generator gen(ctx.seed());
  nn::RNN rnn({.input_size = kWidth, .hidden_size = kWidth, .batch_first = true}, gen);
  nn::CausalConv1d conv(kWidth, k, gen);
  const std::function<Var(const Var&)> run_rnn = [&](const Var& x) { return rnn.forward(x).y; };
  const std::function<Var(const Var&)> run_conv = [&](const Var& x) { return conv.forward(x); };
  struct Row {
    std::string layer, key;
    double doc_exponent;
    std::function<Var(const Var&)> forward;
  };
  const std::vector<Row> rows{{"recurrent", "rnn", 1, run_rnn},
                              {"self-attention", "attention", 0, self_attention},
                              {fmt::format("convolution (kernel {})", k), "conv", 0, run_conv}};
  const int64_t contiguous =
      path_length(t, [&](const Var& x, int64_t) { return causal_conv_ones(x, k, 1); });
  // Layer l dilated by k^l, as a dilated (WaveNet-style) stack grows it.
  const int64_t dilated = path_length(t, [&](const Var& x, int64_t l) {
    int64_t dilation = 1;
    for (int64_t i = 0; i < l; ++i) dilation *= k;
    return causal_conv_ones(x, k, dilation);
  });
  const int64_t attention = path_length(t, [](const Var& x, int64_t) { return self_attention(x); });
  const auto log_k_t = static_cast<int64_t>(
      std::ceil(std::log(static_cast<double>(t)) / std::log(static_cast<double>(k)) - 1e-9));

  Table tab(fmt::format("Ops recorded by one layer's forward (T = {} and {}), layers from output "
                        "{} back to input 0",
                        t1, t2, t - 1),
            {"layer", fmt::format("ops at T = {}", t1), fmt::format("ops at T = {}", t2),
             "growth exponent", "path length (layers)"});
  DocumentComparison cmp("002 §39.3's table vs the tape");
  for (const Row& r : rows) {
    const size_t a = recorded_ops(t1, r.forward), b = recorded_ops(t2, r.forward);
    const double e = growth_exponent(static_cast<double>(a), static_cast<double>(b), t1, t2);
    const std::string path = r.key == "rnn"         ? "1 (of T - 1 steps)"
                             : r.key == "attention" ? std::to_string(attention)
                                                    : std::to_string(contiguous);
    tab.add_row({r.layer, std::to_string(a), std::to_string(b), fixed(e, 3), path});
    ctx.result("sequential_ops_exponent_" + r.key, e);
    // The two orders the column tells apart, O(1) and O(T), are exponents 0 and 1: the
    // tolerance is a tenth of that gap (a fixed overhead of ops shifts it by less).
    cmp.add(fmt::format("sequential operations of a {} layer: O({})", r.layer,
                        r.doc_exponent == 1 ? "T" : "1"),
            r.doc_exponent, e, 0.1, "the exponent of the recorded ops' growth with T");
  }
  tab.add_row({fmt::format("dilated convolution (kernel {}, dilation {}^l)", k, k), "-", "-", "-",
               std::to_string(dilated)});
  ctx.table(tab);
  kit::record(ctx, {{"path_length_attention", attention},
                    {"path_length_conv", contiguous},
                    {"path_length_dilated_conv", dilated},
                    {"path_t", t}});
  cmp.add("maximum path length of self-attention (layers)", 1, static_cast<double>(attention), 0,
          "", 0);
  cmp.add(fmt::format("maximum path length of a convolution, kernel {}: log_k T (T = {})", k, t),
          static_cast<double>(log_k_t), static_cast<double>(contiguous), 0,
          fmt::format("contiguous kernels widen the reach by k - 1 = {} per layer: (T - 1) / (k - "
                      "1) layers; log_k T holds for dilated ones ({} measured)",
                      k - 1, dilated),
          0);
  cmp.add(fmt::format("the same with dilations 1, k, k^2, ... (kernel {})", k),
          static_cast<double>(log_k_t), static_cast<double>(dilated), 0, "", 0);
  ctx.compare(cmp);
  per_layer_costs(ctx);
}

}  // namespace attn::experiments
