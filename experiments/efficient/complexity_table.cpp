#include "experiments/efficient/complexity_table.h"

#include <cmath>

#include "autograd/functional.h"
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

double growth_exponent(size_t small, size_t large, int64_t t1, int64_t t2) {
  return std::log(static_cast<double>(large) / static_cast<double>(small)) /
         std::log(static_cast<double>(t2) / static_cast<double>(t1));
}

}  // namespace

void add_complexity_fields(Config& config) {
  config.add_int("path_t", 64, "sequence length of the path-length measurement", {.min = 4})
      .add_int("conv_kernel", 3, "kernel k of the convolution rows", {.min = 2});
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
    const double e = growth_exponent(a, b, t1, t2);
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
}

}  // namespace attn::experiments
