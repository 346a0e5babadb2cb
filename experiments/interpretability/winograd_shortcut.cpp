// winograd-shortcut [000 §X "understanding or retrieval?"]: a model trained only on sentences in
// which "it" names the first noun learns that shortcut, and fails when "it" names the second.
//
//   attnlab run winograd-shortcut                 # 3 seeds x 2 training sets, ~1 min on 2 cores
//   attnlab run winograd-shortcut --seeds 5 --num_layers 1
//
// The task (experiments/interpretability/winograd_task.h): "the N1 V the N2 because it was ADJ",
// answer the noun "it" names, decided jointly by the verb and the adjective (a toy Winograd
// schema). Two training sets, the same model, loop and budget:
//   shortcut  only the verb-adjective pairs under which "it" names N1 (the document's setting);
//   balanced  every pair, so "it" names N1 or N2 half the time each.
// Both are scored on fresh sentences where "it" names N1 (the shortcut set's distribution) and
// where it names N2 (the shift), over --seeds seeds, with the attention row from "it" (each
// layer, heads averaged): where the model looks when it answers. The seed spread sets the
// tolerances. Step through: PositionReadout::forward, then the last layer's self_attn.
#include "experiments/interpretability/winograd_task.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/trained_model_report.h"

namespace attn::experiments {

namespace {

struct HeldOut {
  WinogradSet first, second;  // "it" names N1 / N2
};

// One trained model scored on both held-out sets.
struct Outcome {
  double on_first = 0, on_second = 0;  // accuracy
  double names_first_on_second = 0;    // share of answers on the shifted set naming N1
  std::vector<std::vector<double>> it_first, it_second;  // per layer: the row from "it"
  train::TrainResult fit;  // its evaluations: accuracy_it_first / _second
};

double accuracy_on(PronounModel& m, const WinogradSet& s, const Tensor& labels) {
  NoGrad off;
  return kit::accuracy(m.forward(s.ids).value(), labels);
}

Outcome train_one(const ReadoutTraining& w,
                  const RunContext& ctx,
                  bool balanced,
                  int64_t seed_index,
                  const HeldOut& held) {
  Generator init(w.seed_of(seed_index)), data(w.seed_of(seed_index) + 1);
  PronounModel m(w.model, init);
  train::FitSettings s = kit::fit_settings(
      ctx, fmt::format("{} seed {}", balanced ? "balanced" : "shortcut", seed_index + 1),
      w.optimizer);
  s.eval_every = w.eval_every;
  const Referent drawn = balanced ? Referent::kEither : Referent::kFirst;
  Outcome o;
  o.fit = train::fit(
      m, s,
      [&](const train::BatchPart& part) {
        const WinogradSet b = draw_winograd(s.batch_size, drawn, data);
        return train::StepLoss{cross_entropy(m.forward(part.rows(b.ids)), part.rows(b.labels))};
      },
      [&](int64_t) {
        return train::Metrics{
            {"accuracy_it_first", accuracy_on(m, held.first, held.first.labels)},
            {"accuracy_it_second", accuracy_on(m, held.second, held.second.labels)}};
      });
  o.on_first = o.fit.final_eval.at("accuracy_it_first");
  o.on_second = o.fit.final_eval.at("accuracy_it_second");
  o.names_first_on_second = accuracy_on(m, held.second, held.second.first);
  for (int64_t l = 0; l < m.num_layers(); ++l) {
    o.it_first.push_back(m.it_row(l, held.first.ids));
    o.it_second.push_back(m.it_row(l, held.second.ids));
  }
  return o;
}

using kit::Spread, kit::spread_over;

// The row from "it" in layer `layer`, averaged over seeds, on the first or the shifted set.
std::vector<double> mean_row(const std::vector<Outcome>& runs, size_t layer, bool shifted) {
  std::vector<double> row(static_cast<size_t>(kSentenceLength), 0.0);
  for (const Outcome& o : runs) {
    const std::vector<double>& r = shifted ? o.it_second[layer] : o.it_first[layer];
    for (size_t k = 0; k < row.size(); ++k) row[k] += r[k] / static_cast<double>(runs.size());
  }
  return row;
}

void report_table(const std::vector<Outcome>& shortcut,
                  const std::vector<Outcome>& balanced,
                  RunContext& ctx) {
  std::vector<std::string> header{"training set", "test: it names", "accuracy (mean ± sd)"};
  const size_t layers = shortcut.front().it_first.size();
  for (size_t l = 0; l < layers; ++l) {
    header.push_back(fmt::format("layer {}: it -> N1", l + 1));
    header.push_back(fmt::format("layer {}: it -> N2", l + 1));
  }
  Table t("Accuracy and attention from \"it\" (heads averaged; mean over seeds)", header);
  for (const auto* runs : {&shortcut, &balanced})
    for (bool shifted : {false, true}) {
      std::vector<std::string> row{runs == &shortcut ? "shortcut" : "balanced",
                                   shifted ? "N2 (shift)" : "N1"};
      row.push_back(
          kit::spread_text(spread_over(*runs, shifted ? &Outcome::on_second : &Outcome::on_first)));
      for (size_t l = 0; l < layers; ++l) {
        const std::vector<double> r = mean_row(*runs, l, shifted);
        row.push_back(fixed(r[kFirstNounAt]));
        row.push_back(fixed(r[kSecondNounAt]));
      }
      t.add_row(row);
    }
  ctx.table(t);
}

void figures(const std::vector<Outcome>& shortcut,
             const std::vector<Outcome>& balanced,
             RunContext& ctx) {
  BarChart acc{.labels = {"it names N1", "it names N2 (shift)"},
               .title = "Held-out accuracy (mean over seeds)",
               .y_label = "accuracy",
               .y_max = 1};
  for (const auto* runs : {&shortcut, &balanced})
    acc.series.push_back({runs == &shortcut ? "shortcut training set" : "balanced training set",
                          {spread_over(*runs, &Outcome::on_first).mean,
                           spread_over(*runs, &Outcome::on_second).mean},
                          ""});
  ctx.figure("accuracy", bar_chart_svg(acc), "Each training set's model, in and out of its data");

  const size_t last = shortcut.front().it_first.size() - 1;
  std::vector<BarChart> panels;
  for (const auto* runs : {&shortcut, &balanced}) {
    panels.push_back({.labels = {"the", "N1", "V", "the", "N2", "because", "it", "was", "ADJ"},
                      .series = {{"test: it names N1", mean_row(*runs, last, false), ""},
                                 {"test: it names N2", mean_row(*runs, last, true), ""}},
                      .title = runs == &shortcut ? "shortcut model" : "balanced model",
                      .y_label = "attention weight"});
  }
  ctx.figure("it_row", bar_panels_svg(panels, "The last layer's attention row from \"it\""),
             "Where \"it\" looks (heads averaged, mean over sentences and seeds)");

  LinePlot p = kit::line_plot("Seed 1 during training", "step", "held-out accuracy");
  for (const auto* runs : {&shortcut, &balanced}) {
    const train::TrainResult& fit = runs->front().fit;
    const std::string name = runs == &shortcut ? "shortcut" : "balanced";
    p.series.push_back(kit::eval_series(fit, "accuracy_it_first", name + ": it names N1"));
    p.series.push_back(kit::eval_series(fit, "accuracy_it_second", name + ": it names N2"));
    p.series.back().dashed = true;
  }
  ctx.figure("training", line_plot_svg(p), "Accuracy on both held-out sets while training");
}

void compare(const ReadoutTraining& w,
             const std::vector<Outcome>& shortcut,
             const std::vector<Outcome>& balanced,
             RunContext& ctx) {
  // Tolerance: three standard deviations over seeds, and never below three standard errors of a
  // rate measured on eval_size sentences (1.5 / sqrt(n)), which a few seeds can underestimate.
  const double three_se = 1.5 / std::sqrt(static_cast<double>(w.eval_size));
  auto tolerance = [&](const Spread& s) { return std::max(3 * s.sd, three_se); };
  const Spread in = spread_over(shortcut, &Outcome::on_first);
  const Spread out = spread_over(shortcut, &Outcome::on_second);
  const Spread names_first = spread_over(shortcut, &Outcome::names_first_on_second);
  const Spread control = spread_over(balanced, &Outcome::on_second);
  // The failure means something only if the shortcut model learned its own data (better than
  // picking one of the two nouns at random) and the same model can solve the shifted sentences
  // when its data contain them (the balanced control).
  const double learned = 0.5 + three_se;
  DocumentComparison cmp(
      fmt::format("000 §X: a pronoun shortcut vs ours (mean of {} seeds)", w.seeds));
  cmp.add("shortcut training: accuracy when it names the first noun (in distribution)", 1.0,
          in.mean, tolerance(in), "the model did not learn its own training distribution");
  cmp.add("shortcut training: accuracy when it names the second noun (the shift: fails)", 0.0,
          out.mean, tolerance(out), "the model partly learned the verb-adjective rule")
      .needs_training(in.mean, learned, "in-distribution accuracy")
      .needs_training(control.mean, learned, "balanced model's accuracy on the shifted set");
  cmp.add("shortcut training: shifted answers naming the first noun (the shortcut)", 1.0,
          names_first.mean, tolerance(names_first),
          "the model does not always answer the first noun under the shift")
      .needs_training(in.mean, learned, "in-distribution accuracy");
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  const ReadoutTraining w(cfg, ctx.seed());
  Generator held_gen(w.seed + 999);
  const HeldOut held{draw_winograd(w.eval_size, Referent::kFirst, held_gen),
                     draw_winograd(w.eval_size, Referent::kSecond, held_gen)};
  ctx.note(fmt::format("Held-out example (it names N2): \"{}\"",
                       fmt::join(winograd_words(held.second.ids, 0), " ")));
  std::vector<Outcome> shortcut, balanced;
  for (int64_t s = 0; s < w.seeds; ++s) {
    shortcut.push_back(train_one(w, ctx, false, s, held));
    balanced.push_back(train_one(w, ctx, true, s, held));
  }
  for (const auto* runs : {&shortcut, &balanced}) {
    const std::string k = runs == &shortcut ? "shortcut" : "balanced";
    const size_t last = runs->front().it_first.size() - 1;
    kit::record(
        ctx, {{k + "_accuracy_it_first", kit::column(*runs, &Outcome::on_first)},
              {k + "_accuracy_it_second", kit::column(*runs, &Outcome::on_second)},
              {k + "_names_first_on_second", kit::column(*runs, &Outcome::names_first_on_second)},
              {k + "_it_row_last_layer_it_first", mean_row(*runs, last, false)},
              {k + "_it_row_last_layer_it_second", mean_row(*runs, last, true)}});
  }
  report_table(shortcut, balanced, ctx);
  figures(shortcut, balanced, ctx);
  compare(w, shortcut, balanced, ctx);
}

}  // namespace

Experiment winograd_shortcut() {
  Experiment e;
  e.name = "winograd-shortcut";
  e.source = "000 §X";
  e.purpose = "A pronoun shortcut learned from skewed data, and its failure under a shift";
  e.config.add_int("seeds", 3, "seeds per training set (their spread sets the tolerances)",
                   {.min = 1, .max = 20});
  add_model_fields(e.config, {.d_model = 32, .nhead = 2, .num_layers = 2, .dim_ff = 64});
  add_optimizer_fields(e.config, {.steps = 600, .batch_size = 64, .lr = 3e-3});
  add_eval_fields(e.config, {.eval_size = 1000, .eval_every = 100});
  e.quick = {{"steps", "60"}, {"seeds", "2"}, {"eval_size", "200"}, {"eval_every", "30"}};
  e.check = [](const Config& c) { check_model(c); };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
