// scaling-variance, part 3 (experiments/basics/scaling_variance.cpp): one training run of a
// one-layer attention model on associative recall, from the same initial weights and batches,
// with and without the factor 1/sqrt(d_k).
#include "experiments/basics/scaling_variance_training.h"

#include "experiments/common/pair_memory_model.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/trained_model_report.h"

namespace attn::experiments {

namespace {

double tail_mean(const std::vector<double>& xs, double fraction) {
  return kit::mean_of_last(xs,
                           std::max<size_t>(1, static_cast<size_t>(fraction * double(xs.size()))));
}

// The first eval step at which accuracy reached `target` (NaN if never).
double first_step_at(const RecallRun& r, double target) {
  for (size_t i = 0; i < r.eval_accuracy.size(); ++i)
    if (r.eval_accuracy[i] >= target) return r.eval_steps[i];
  return NAN;
}

std::vector<double> smooth(const std::vector<double>& xs, size_t window) {
  std::vector<double> out;
  double s = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    s += xs[i];
    if (i >= window) s -= xs[i - window];
    out.push_back(s / static_cast<double>(std::min(i + 1, window)));
  }
  return out;
}

std::string step_text(double step) {
  return std::isnan(step) ? std::string("never") : fmt::format("{:.0f}", step);
}

// Part 3's two runs: the same initial weights and batches, with and without the factor.
struct TrainingPair {
  PairMemoryConfig pc;
  RecallRun with, without;
  double tail_s = 0, tail_u = 0;  // loss, mean of the last 10% of steps
};

TrainingPair train_both(const Config& cfg, RunContext& ctx) {
  TrainingPair r{.pc = {.d = cfg.get_int("train_dk"),
                        .pairs = cfg.get_int("recall_pairs"),
                        .steps = cfg.get_int("steps"),
                        .batch = cfg.get_int("batch"),
                        .lr = cfg.get_real("lr"),
                        .eval_every = cfg.get_int("eval_every"),
                        .eval_size = cfg.get_int("eval_size")}};
  const PairMemoryConfig& pc = r.pc;
  ctx.section(
      fmt::format("Training at d_k = {}: associative recall ({} pairs), one attention "
                  "layer, {} Adam steps",
                  pc.d, pc.pairs, pc.steps));
  // The two runs are independent (each makes its own generators from the seed), so they train
  // side by side, one core each.
  std::vector<RecallRun> runs = kit::side_by_side(2, [&](size_t i) {
    PairMemoryConfig c = pc;
    c.scaled = i == 0;
    return train_pair_memory(c, ctx.seed());
  });
  r.with = std::move(runs[0]), r.without = std::move(runs[1]);
  r.tail_s = tail_mean(r.with.losses, 0.1), r.tail_u = tail_mean(r.without.losses, 0.1);
  return r;
}

void report_training(const TrainingPair& r, double target, RunContext& ctx) {
  const RecallRun &with = r.with, &without = r.without;
  const double reach_s = first_step_at(with, target), reach_u = first_step_at(without, target);
  Table t("Same initial weights and batches", {"", "scaled 1/sqrt(d_k)", "unscaled"});
  t.add_row({"loss, mean of the last 10% of steps", sig(r.tail_s, 3), sig(r.tail_u, 3)});
  t.add_row({"held-out accuracy at the end", fixed(with.eval_accuracy.back(), 3),
             fixed(without.eval_accuracy.back(), 3)});
  t.add_row({fmt::format("first step with accuracy >= {:.2f}", target), step_text(reach_s),
             step_text(reach_u)});
  t.add_row({"attention entropy at step 0 (nats)", fixed(with.eval_entropy.front(), 3),
             fixed(without.eval_entropy.front(), 3)});
  t.add_row({"|dL/dW_q| + |dL/dW_k| at step 1", sig(with.score_grad_norm.front(), 3),
             sig(without.score_grad_norm.front(), 3)});
  t.add_row({"seconds", fixed(with.seconds, 1), fixed(without.seconds, 1)});
  ctx.table(t);
  kit::record(ctx, {{"train_tail_loss_scaled", r.tail_s},
                    {"train_tail_loss_unscaled", r.tail_u},
                    {"train_accuracy_scaled", with.eval_accuracy},
                    {"train_accuracy_unscaled", without.eval_accuracy},
                    {"train_eval_steps", with.eval_steps},
                    {"train_first_loss_scaled", with.losses.front()},
                    {"train_first_loss_unscaled", without.losses.front()},
                    {"train_entropy_step0_scaled", with.eval_entropy.front()},
                    {"train_entropy_step0_unscaled", without.eval_entropy.front()},
                    {"train_grad_wqk_step1_scaled", with.score_grad_norm.front()},
                    {"train_grad_wqk_step1_unscaled", without.score_grad_norm.front()}});
  ctx.note(fmt::format(
      "Both runs start from the same weights; only the factor differs. At step 0 the unscaled "
      "scores put the attention at entropy {:.3f} nats against {:.3f} scaled (uniform over {} "
      "slots: {:.3f}). After {} steps the loss is {:.3g} scaled and {:.3g} unscaled (mean of "
      "the last 10%), and held-out accuracy {:.3f} against {:.3f}.",
      without.eval_entropy.front(), with.eval_entropy.front(), r.pc.pairs,
      std::log(static_cast<double>(r.pc.pairs)), r.pc.steps, r.tail_s, r.tail_u,
      with.eval_accuracy.back(), without.eval_accuracy.back()));
}

void compare_training(const TrainingPair& r, DocumentComparison& cmp) {
  const RecallRun &with = r.with, &without = r.without;
  const bool faster =
      r.tail_s < r.tail_u && with.eval_accuracy.back() >= without.eval_accuracy.back();
  cmp.add_exact(
      fmt::format("training at d_k = {}: the scaled model learns faster", r.pc.d), "yes",
      kit::yes_no(faster),
      fmt::format("tail loss {:.3g} scaled vs {:.3g} unscaled; accuracy {:.3f} vs "
                  "{:.3f}",
                  r.tail_s, r.tail_u, with.eval_accuracy.back(), without.eval_accuracy.back()));
  const double g1_s = with.score_grad_norm.front(), g1_u = without.score_grad_norm.front();
  cmp.add_exact(
      fmt::format("training at d_k = {}: smaller gradient on W_q, W_k unscaled (step 1)", r.pc.d),
      "yes", kit::yes_no(g1_u < g1_s),
      g1_u < g1_s ? ""
                  : fmt::format("{:.3g} unscaled vs {:.3g} scaled: what slows the "
                                "unscaled run is a softmax already committed to one "
                                "slot (entropy {:.3f} nats at step 0), not a small "
                                "gradient",
                                g1_u, g1_s, without.eval_entropy.front()));
}

}  // namespace

void scaling_variance_training(const Config& cfg, RunContext& ctx, DocumentComparison& cmp) {
  const TrainingPair r = train_both(cfg, ctx);
  CsvWriter log = ctx.csv(
      "training", {"step", "loss_scaled", "loss_unscaled", "grad_wqk_scaled", "grad_wqk_unscaled"});
  for (size_t i = 0; i < r.with.losses.size(); ++i)
    log.row({static_cast<double>(i + 1), r.with.losses[i], r.without.losses[i],
             r.with.score_grad_norm[i], r.without.score_grad_norm[i]});
  report_training(r, cfg.get_real("target"), ctx);
  compare_training(r, cmp);
  const size_t window = std::max<size_t>(1, r.with.losses.size() / 50);
  LinePlot p = kit::line_plot(
      fmt::format("Recall at d_k = {}: training loss ({}-step moving mean)", r.pc.d, window),
      "step", "cross-entropy", kit::Axes::kLogY);
  p.series = {kit::step_series("scaled, 1/sqrt(d_k)", smooth(r.with.losses, window)),
              kit::step_series("unscaled", smooth(r.without.losses, window))};
  ctx.figure("training_loss", line_plot_svg(p), "The same model with and without 1/sqrt(d_k)");
  LinePlot a = kit::line_plot("Held-out accuracy", "step", "accuracy");
  a.series = {{"scaled, 1/sqrt(d_k)", r.with.eval_steps, r.with.eval_accuracy},
              {"unscaled", r.without.eval_steps, r.without.eval_accuracy}};
  ctx.figure("training_accuracy", line_plot_svg(a), "Held-out recall accuracy during training");
}

}  // namespace attn::experiments
