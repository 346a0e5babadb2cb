// demo: the smallest complete training run — a 2-layer MLP learns XOR on points of the plane.
//
//   attnlab demo                      (what scripts/run does by default)
//   attnlab run demo --hidden 32 --steps 600
//
// The label of a point (x, y) in [-1,1]^2 is 1 when x*y > 0 (same-sign quadrants), else 0: no
// straight line separates the classes, so the hidden layer has to bend the plane. Training is
// plain full-batch gradient descent written out in three lines, so the loop shows everything:
// forward, loss, backward, update; then the check every training loop makes (train/divergence.h):
// a NaN or exploding loss stops the run, naming the step.
#include <typeinfo>

#include "experiments/kit/kit.h"
#include "train/divergence.h"

namespace attn::experiments {

namespace {

struct XorData {
  Tensor x;  // (N,2) points
  Tensor y;  // (N) class ids 0/1
};

XorData make_xor(int64_t n, Generator& gen) {
  XorData d{Tensor::rand({n, 2}, gen, -1, 1), Tensor({n})};
  for (int64_t i = 0; i < n; ++i) d.y[i] = d.x[2 * i] * d.x[2 * i + 1] > 0 ? 1 : 0;
  return d;
}

struct Mlp {
  nn::Linear fc1, fc2;
  Mlp(int64_t hidden, Generator& gen) : fc1(2, hidden, true, gen), fc2(hidden, 2, true, gen) {}
  Var forward(const Var& x) const { return fc2.forward(tanh(fc1.forward(x))); }  // (N,2) logits
  std::vector<Var> parameters() const { return {fc1.weight, fc1.bias, fc2.weight, fc2.bias}; }
};

// What the network learned: P(class 1) over a grid of the plane.
void plot_decision(const Mlp& model, RunContext& ctx) {
  const int64_t g = 25;
  Tensor grid({g * g, 2});
  for (int64_t r = 0; r < g; ++r)
    for (int64_t c = 0; c < g; ++c) {
      grid[2 * (r * g + c)] = static_cast<real>(-1 + 2.0 * c / (g - 1));
      grid[2 * (r * g + c) + 1] = static_cast<real>(1 - 2.0 * r / (g - 1));
    }
  Tensor probs;
  {
    NoGrad off;
    probs = softmax(model.forward(Var::constant(grid))).value().clone();
  }
  Tensor p1({g, g});
  for (int64_t i = 0; i < g * g; ++i) p1[i] = probs[2 * i + 1];
  std::vector<std::string> cols, rows;
  for (int64_t i = 0; i < g; ++i) {
    cols.push_back(i % 6 == 0 ? fmt::format("{:.1f}", -1 + 2.0 * i / (g - 1)) : "");
    rows.push_back(i % 6 == 0 ? fmt::format("{:.1f}", 1 - 2.0 * i / (g - 1)) : "");
  }
  const Heatmap h{.values = p1,
                  .row_labels = rows,
                  .col_labels = cols,
                  .title = "P(same-sign quadrant) learned by the MLP",
                  .x_label = "x",
                  .y_label = "y",
                  .colorbar_label = "P(class 1)",
                  .vmin = 0,
                  .vmax = 1};
  ctx.figure("decision", heatmap_svg(h), "The learned function over the plane");
}

// One step of full-batch gradient descent: forward, loss, backward, w -= lr * dw. Returns the
// loss; `logits` gets the forward's output (for the accuracy).
double gradient_step(const Mlp& model, const XorData& train, real lr, Tensor& logits) {
  Var out = model.forward(Var::constant(train.x));
  Var loss = cross_entropy(out, train.y);
  loss.backward();  // fills every parameter's grad, clears the tape
  for (Var& p : model.parameters()) {
    Tensor& w = p.value();
    const Tensor& dw = p.grad();
    for (int64_t i = 0; i < w.numel(); ++i) w[i] -= lr * dw[i];
    p.zero_grad();
  }
  logits = out.value();
  return loss.item();
}

void run(const Config& cfg, RunContext& ctx) {
  Generator gen(ctx.seed());
  const XorData train = make_xor(cfg.get_int("points"), gen);
  const XorData test = make_xor(512, gen);
  Mlp model(cfg.get_int("hidden"), gen);
  const real lr = static_cast<real>(cfg.get_real("lr"));
  const int64_t steps = cfg.get_int("steps"), every = std::max<int64_t>(1, steps / 10);

  ctx.section("Training (full-batch gradient descent)");
  CsvWriter log = ctx.csv("metrics", {"step", "loss", "train_accuracy", "seconds"});
  std::vector<double> xs, losses;
  const auto start = std::chrono::steady_clock::now();
  double loss_value = 0, first_loss = 0;
  train::DivergenceCheck diverged("mlp");
  for (int64_t step = 1; step <= steps; ++step) {
    Tensor logits;
    try {
      loss_value = gradient_step(model, train, lr, logits);
      diverged.check(step, loss_value);
    } catch (const Error& e) {
      // Anomaly detection's error (a plain attn::Error) names the op that made the first
      // NaN/Inf; only this loop knows the step, so it adds it, as train::Trainer's loop does.
      if (typeid(e) != typeid(Error) || !detect_anomaly()) throw;
      throw Error(fmt::format("variant 'mlp': step {}: {}", step, e.what()));
    }
    if (step == 1) first_loss = loss_value;
    xs.push_back(static_cast<double>(step));
    losses.push_back(loss_value);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double acc = kit::accuracy(logits, train.y);
    log.row({static_cast<double>(step), loss_value, acc, secs});
    if (step == 1 || step % every == 0)
      fmt::print("step {:5d}  loss {:.4f}  train accuracy {:5.1f}%  {:.2f} s\n", step, loss_value,
                 100 * acc, secs);
  }
  double test_acc;
  {
    NoGrad off;
    test_acc = kit::accuracy(model.forward(Var::constant(test.x)).value(), test.y);
  }
  ctx.note(fmt::format("Loss {:.4f} -> {:.4f} in {} steps; accuracy on 512 new points {:.1f}%.",
                       first_loss, loss_value, steps, 100 * test_acc));
  ctx.result("first_loss", first_loss);
  ctx.result("final_loss", loss_value);
  ctx.result("test_accuracy", test_acc);

  LinePlot curve = kit::line_plot("The loss falls", "step", "cross-entropy");
  curve.series = {{"training loss", xs, losses, "", false, false}};
  curve.refs = {{RefLine::kHorizontal, std::log(2.0), "ln 2 (guessing)"}};
  ctx.figure("loss", line_plot_svg(curve), "Training loss per step");

  plot_decision(model, ctx);
}

}  // namespace

Experiment demo() {
  Experiment e;
  e.name = "demo";
  e.source = "(none)";
  e.purpose = "A 2-layer MLP learns XOR on the plane: watch the loss fall";
  e.config.add_int("points", 256, "training points (every step sees them all)", {.min = 4});
  add_model_fields(e.config, {.hidden = 16});                 // tanh units
  add_optimizer_fields(e.config, {.steps = 400, .lr = 0.5});  // plain gradient descent
  e.quick = {{"steps", "200"}};
  e.run = run;
  return e;
}

}  // namespace attn::experiments
