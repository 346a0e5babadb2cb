// causal-mask [002 Ex. 39.3]: with a causal mask, position t attends only to positions <= t.
// The attention matrix is lower-triangular — and, more to the point, the tape proves that no
// output depends on the future: dy_t/dx_{t+k} is exactly 0 for every k >= 1.
//
//   attnlab run causal-mask
//   attnlab run causal-mask --t 16 --d_model 32
//
// For each output position t we backpropagate a random upstream gradient that is nonzero only
// on y_t and read the gradient that reaches every input row x_s: J[t][s] = |dL/dx_s| with
// L = <g, y_t>. Causal: J is lower-triangular with exact zeros (not merely small numbers: the
// masked weights are exactly 0, so nothing flows back). Without the mask every entry is > 0.
// Then 003's Check Your Understanding 2 (causal_generation.h): models trained with and without
// the mask, generating and classifying.
// Step through: break attn::nn::scaled_dot_product_attention, then `call attn::print_tape()`.
#include "experiments/basics/causal_generation.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

struct Head {
  nn::Linear wq, wk, wv;
  int64_t d_k;
  Head(int64_t d_model, int64_t d_k_, Generator& gen)
      : wq(d_model, d_k_, false, gen),
        wk(d_model, d_k_, false, gen),
        wv(d_model, d_k_, false, gen),
        d_k(d_k_) {}
  // x (1,T,d_model) -> out and weights of one head, (1,1,T,d_k) and (1,1,T,T)
  nn::AttentionOutput forward(const Var& x, bool causal) const {
    const int64_t t = x.size(1);
    auto split = [&](const nn::Linear& w) { return reshape(w.forward(x), {1, 1, t, d_k}); };
    nn::SdpaOptions opt;
    opt.masks.causal = causal;
    return nn::scaled_dot_product_attention(split(wq), split(wk), split(wv), opt);
  }
};

// J[t][s] = Frobenius norm of d<g_t, y_t>/dx_s for a random g_t, through the tape.
Tensor input_gradient_map(const Head& head, const Tensor& x0, bool causal, Generator& gen) {
  const int64_t t = x0.size(1), d_model = x0.size(2);
  Tensor j({t, t});
  for (int64_t row = 0; row < t; ++row) {
    Var x = Var::parameter(x0.clone(), "x");
    nn::AttentionOutput a = head.forward(x, causal);
    Tensor gy(a.out.shape());  // zero except the output row `row`
    for (int64_t c = 0; c < head.d_k; ++c) gy[row * head.d_k + c] = static_cast<real>(gen.normal());
    a.out.backward(gy);
    const Tensor& dx = x.grad();
    for (int64_t s = 0; s < t; ++s) {
      double n2 = 0;
      for (int64_t c = 0; c < d_model; ++c) n2 += double(dx[s * d_model + c]) * dx[s * d_model + c];
      j[row * t + s] = static_cast<real>(std::sqrt(n2));
    }
  }
  for (const Var& w : {head.wq.weight, head.wk.weight, head.wv.weight}) Var(w).zero_grad();
  return j;
}

// The two gradient maps side by side: with the mask, nothing flows from the future.
void plot_gradient_flow(const Tensor& causal, const Tensor& full, RunContext& ctx) {
  const int64_t t = causal.size(0);
  const auto panel = [&](const Tensor& values, std::string title) {
    return Heatmap{.values = values,
                   .row_labels = index_labels(t, "y"),
                   .col_labels = index_labels(t, "x"),
                   .title = std::move(title),
                   .x_label = "input position s",
                   .y_label = "output position t",
                   .colorbar_label = "|d<g, y_t>/dx_s|"};
  };
  ctx.figure("gradient_flow",
             heatmap_grid_svg({panel(causal, "causal"), panel(full, "no mask")}, 2,
                              "Gradient from output t to input s"),
             "Through the tape: with the mask, nothing flows from the future");
}

void run(const Config& cfg, RunContext& ctx) {
  const int64_t t = cfg.get_int("t"), d_model = cfg.get_int("d_model");
  Generator gen(ctx.seed());
  const Head head(d_model, cfg.get_int("d_k"), gen);
  const Tensor x0 = Tensor::randn({1, t, d_model}, gen);
  const auto pos = index_labels(t);

  ctx.section("The masked attention matrix");
  nn::AttentionOutput a;
  {
    Var x = Var::parameter(x0.clone(), "x");
    a = head.forward(x, true);
    ctx.note("The tape of one causal forward pass (the mask enters before the softmax):");
    ctx.preformatted(tape().to_string());
    tape().clear();
  }
  const Tensor w = a.weights.value().reshape({t, t});
  ctx.matrix("A (causal)", w, index_labels(t, "q"), index_labels(t, "k"));
  double above = 0, row_sum_err = 0;
  for (int64_t i = 0; i < t; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < t; ++j) {
      sum += w[i * t + j];
      if (j > i) above = std::max(above, static_cast<double>(std::fabs(w[i * t + j])));
    }
    row_sum_err = std::max(row_sum_err, std::fabs(sum - 1));
  }
  ctx.result("max_weight_above_diagonal", above);
  ctx.result("max_row_sum_error", row_sum_err);
  ctx.note(
      fmt::format("Largest weight above the diagonal: {} (exactly zero: {}). Row 0 can "
                  "only see itself, so its weight on key 0 is {}.",
                  above, kit::yes_no(above == 0), w[0]));

  ctx.section("The tape's proof: gradient from y_t to every x_s");
  const Tensor jc = input_gradient_map(head, x0, true, gen);
  const Tensor jf = input_gradient_map(head, x0, false, gen);
  double future = 0, past_min = INFINITY, full_min = INFINITY;
  int64_t future_nonzero = 0;
  for (int64_t i = 0; i < t; ++i)
    for (int64_t s = 0; s < t; ++s) {
      const double g = jc[i * t + s];
      if (s > i) {
        future = std::max(future, g);
        future_nonzero += g != 0;
      } else {
        past_min = std::min(past_min, g);
      }
      full_min = std::min(full_min, static_cast<double>(jf[i * t + s]));
    }
  ctx.matrix("|dL/dx_s| for L = <g, y_t> (causal)", jc, index_labels(t, "y"), index_labels(t, "x"),
             4);
  ctx.result("max_gradient_to_future", future);
  ctx.result("future_entries_nonzero", future_nonzero);
  ctx.result("min_gradient_to_past", past_min);
  ctx.result("min_gradient_without_mask", full_min);
  ctx.result("gradient_map_causal", jc);
  ctx.result("gradient_map_full", jf);
  ctx.note(fmt::format(
      "Causal: {} of the {} entries with s > t are nonzero (largest {}), while every entry with "
      "s <= t is positive (smallest {:.3g}). Without the mask every entry is positive (smallest "
      "{:.3g}): each output depends on every input.",
      future_nonzero, t * (t - 1) / 2, future, past_min, full_min));

  DocumentComparison cmp("002 Ex. 39.3 vs ours");
  cmp.add_exact("masked attention matrix is lower-triangular", "yes", kit::yes_no(above == 0));
  cmp.add_exact("dy_t/dx_{t+k} = 0 for all k >= 1 (exactly)", "yes",
                kit::yes_no(future == 0 && future_nonzero == 0));
  ctx.compare(cmp);

  Heatmap hm =
      attention_heatmap(w, index_labels(t, "q"), index_labels(t, "k"), "Causal attention weights");
  hm.annotate = t <= 10;
  ctx.figure("attention", heatmap_svg(hm), "Everything above the diagonal is exactly 0");

  plot_gradient_flow(jc, jf, ctx);
  causal_generation(cfg, ctx);
}

}  // namespace

Experiment causal_mask() {
  Experiment e;
  e.name = "causal-mask";
  e.source = "002 Ex. 39.3, 003 Check Your Understanding 2";
  e.purpose =
      "Causal masking: lower-triangular weights, dy_t/dx_{t+k} = 0 on the tape, and why "
      "generation needs the mask while classification does not";
  e.config.add_int("t", 8, "sequence length", {.min = 2})
      .add_int("d_k", 16, "query/key/value width", {.min = 1});
  add_model_fields(e.config, {.d_model = 16});
  add_causal_generation_fields(e.config);
  e.quick = {{"gen_steps", "60"}, {"gen_eval", "100"}};
  e.reference = true;  // its point is the computation: the elementary ops on the tape
  e.run = run;
  return e;
}

}  // namespace attn::experiments
