// context-bank [000, "dynamic topology": one word, two contexts]: "bank" has one static
// embedding, but after attention its vector and its attention row depend on the words around it.
//
//   attnlab run context-bank                      # 3 seeds, ~25 s on 2 cores
//   attnlab run context-bank --seeds 5 --num_layers 1
//
// The task (experiments/interpretability/context_bank_task.h): eight words with "bank" at
// position 3 among two words of one sense (river or money), one word of the other and four
// fillers; the model (position_readout.h) reads the vector at "bank" and names a further word of
// the sentence's sense, so that vector must carry the sense. On held-out sentences, for the
// trained model and for the same model before training (the control), it measures:
//   - the static embedding of "bank" in every sentence (one vector: the largest distance);
//   - the attention row from "bank" in each layer: the weight per word on river words, money
//     words and fillers, in river sentences against money sentences;
//   - the output at "bank": the cosine distance between the river and money sentences' mean
//     outputs, against the mean distance of an output from its own sense's mean (the spread);
//   - a nearest-centroid probe fitted on half the sentences and scored on the other half, reading
//     the sense from the output and from the static embedding.
// Every number is over --seeds seeds, whose spread sets the tolerances. Step through:
// PositionReadout::forward, then the last layer's self_attn.
#include "experiments/interpretability/context_bank_task.h"
#include "experiments/interpretability/position_readout.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/trained_model_report.h"

namespace attn::experiments {

namespace {

constexpr int kKinds = 4;  // river words, money words, fillers, "bank" itself
const char* const kKindNames[kKinds] = {"river words", "money words", "fillers", "bank itself"};
// WordKind (bank, filler, river, money) -> its column in kKindNames.
constexpr size_t kColumn[kKinds] = {3, 2, 0, 1};
using Mass = std::array<std::array<double, kKinds>, 2>;  // [sentence sense][kind]: weight per word

// What "bank" carries in one model on the held-out sentences.
struct Reading {
  double sense_accuracy = 0, word_accuracy = 0;  // the readout's word: its sense, the word
  double static_distance = 0;                    // largest |e(bank in r) - e(bank in 0)|
  double probe_output = 0, probe_static = 0;     // nearest-centroid probe accuracy
  double between = 0, within = 0;                // cosine distances (see the file comment)
  double attention_shift = 0;  // last layer: per-word weight on own-sense minus other-sense words
  std::vector<Mass> mass;      // per layer
};

struct Outcome {
  Reading untrained, trained;
  train::TrainResult fit;  // its evaluations: sense_accuracy, word_accuracy
};

int sense_of(const BankSet& s, int64_t r) {
  return static_cast<int>(s.sense[r]);
}

// The readout's accuracy: its word's sense against the sentence's, and the word itself.
std::pair<double, double> readout_accuracy(PositionReadout& m, const BankSet& s) {
  NoGrad off;
  const Tensor logits = m.forward(s.ids).value();
  const int64_t n = s.ids.size(0), classes = logits.size(1);
  double sense_right = 0, word_right = 0;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t word = kit::argmax(logits.data() + r * classes, classes);
    sense_right += word / bank_words_per_sense() == sense_of(s, r);
    word_right += word == static_cast<int64_t>(s.labels[r]);
  }
  return {sense_right / static_cast<double>(n), word_right / static_cast<double>(n)};
}

// Nearest-centroid probe: the sense means of the first half's vectors, scored on the second
// half (each vector gets the sense of the nearer mean; a tie goes to river).
double probe(const Tensor& x, const BankSet& s) {
  const int64_t n = x.size(0), d = x.size(1), fit = n / 2;
  std::vector<double> centre(static_cast<size_t>(2 * d), 0.0);
  std::array<double, 2> count{0, 0};
  for (int64_t r = 0; r < fit; ++r) {
    count[static_cast<size_t>(sense_of(s, r))] += 1;
    for (int64_t j = 0; j < d; ++j)
      centre[static_cast<size_t>(sense_of(s, r) * d + j)] += x[r * d + j];
  }
  for (int64_t j = 0; j < 2 * d; ++j)
    centre[static_cast<size_t>(j)] /= count[static_cast<size_t>(j / d)];
  double right = 0;
  for (int64_t r = fit; r < n; ++r) {
    std::array<double, 2> dist{0, 0};
    for (int c = 0; c < 2; ++c)
      for (int64_t j = 0; j < d; ++j) {
        const double diff = x[r * d + j] - centre[static_cast<size_t>(c * d + j)];
        dist[static_cast<size_t>(c)] += diff * diff;
      }
    right += (dist[1] < dist[0] ? 1 : 0) == sense_of(s, r);
  }
  return right / static_cast<double>(n - fit);
}

double cosine_distance(const double* a, const double* b, int64_t d) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t j = 0; j < d; ++j) {
    ab += a[j] * b[j];
    aa += a[j] * a[j];
    bb += b[j] * b[j];
  }
  return 1 - ab / std::sqrt(aa * bb);
}

// between: 1 - cos(river mean, money mean); within: the mean of 1 - cos(output, its sense's mean).
void separation(const Tensor& x, const BankSet& s, Reading& out) {
  const int64_t n = x.size(0), d = x.size(1);
  std::vector<double> mean(static_cast<size_t>(2 * d), 0.0), row(static_cast<size_t>(d));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t j = 0; j < d; ++j)
      mean[static_cast<size_t>(sense_of(s, r) * d + j)] +=
          x[r * d + j] / (static_cast<double>(n) / 2);
  out.between = cosine_distance(mean.data(), mean.data() + d, d);
  out.within = 0;
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < d; ++j) row[static_cast<size_t>(j)] = x[r * d + j];
    out.within +=
        cosine_distance(row.data(), mean.data() + sense_of(s, r) * d, d) / static_cast<double>(n);
  }
}

// The weight per word from "bank" on each kind of word, by the sentence's sense (heads averaged).
Mass attention_mass(PositionReadout& m, int64_t layer, const BankSet& s) {
  const Tensor rows = m.attention_rows(layer, s.ids);  // (n,8)
  Mass total{}, words{};
  for (int64_t r = 0; r < s.ids.size(0); ++r)
    for (int64_t t = 0; t < kBankLength; ++t) {
      const size_t k = kColumn[static_cast<size_t>(bank_word_kind(s.ids[r * kBankLength + t]))];
      total[static_cast<size_t>(sense_of(s, r))][k] += rows[r * kBankLength + t];
      words[static_cast<size_t>(sense_of(s, r))][k] += 1;
    }
  for (size_t c = 0; c < 2; ++c)
    for (size_t k = 0; k < kKinds; ++k) total[c][k] /= words[c][k];
  return total;
}

Reading read_bank(PositionReadout& m, const BankSet& s) {
  Reading out;
  std::tie(out.sense_accuracy, out.word_accuracy) = readout_accuracy(m, s);
  const Tensor e = m.static_embedding(s.ids), h = m.read_vector(s.ids);
  const int64_t n = e.size(0), d = e.size(1);
  for (int64_t r = 0; r < n; ++r) {
    double squared = 0;
    for (int64_t j = 0; j < d; ++j) squared += (e[r * d + j] - e[j]) * (e[r * d + j] - e[j]);
    out.static_distance = std::max(out.static_distance, std::sqrt(squared));
  }
  out.probe_output = probe(h, s);
  out.probe_static = probe(e, s);
  separation(h, s, out);
  for (int64_t l = 0; l < m.num_layers(); ++l) out.mass.push_back(attention_mass(m, l, s));
  const Mass& last = out.mass.back();  // own sense minus the other, averaged over both senses
  out.attention_shift = (last[0][0] - last[0][1] + last[1][1] - last[1][0]) / 2;
  return out;
}

Outcome train_one(const ReadoutTraining& w,
                  const RunContext& ctx,
                  int64_t seed_index,
                  const BankSet& held) {
  Generator init(w.seed_of(seed_index)), data(w.seed_of(seed_index) + 1);
  PositionReadout m("BankModel", w.model,
                    {.vocabulary = bank_vocabulary(),
                     .length = kBankLength,
                     .read_at = kBankAt,
                     .classes = 2 * bank_words_per_sense()},
                    init);
  Outcome o;
  o.untrained = read_bank(m, held);
  train::FitSettings s =
      kit::fit_settings(ctx, fmt::format("seed {}", seed_index + 1), w.optimizer);
  s.eval_every = w.eval_every;
  o.fit = train::fit(
      m, s,
      [&](const train::BatchPart& part) {
        const BankSet b = draw_bank(s.batch_size, data);
        return train::StepLoss{cross_entropy(m.forward(part.rows(b.ids)), part.rows(b.labels))};
      },
      [&](int64_t) {
        const auto [sense, word] = readout_accuracy(m, held);
        return train::Metrics{{"sense_accuracy", sense}, {"word_accuracy", word}};
      });
  o.trained = read_bank(m, held);
  return o;
}

using kit::Spread;
// One reading of the trained or the untrained models, per seed.
std::vector<double> per_seed(const std::vector<Outcome>& runs,
                             bool trained,
                             double Reading::*field) {
  return kit::column(runs,
                     [&](const Outcome& o) { return (trained ? o.trained : o.untrained).*field; });
}
// Its mean over seeds and its sample standard deviation.
Spread spread(const std::vector<Outcome>& runs, bool trained, double Reading::*field) {
  return kit::spread_of(per_seed(runs, trained, field));
}

// Layer `layer`'s weights per word, averaged over seeds.
Mass mean_mass(const std::vector<Outcome>& runs, bool trained, size_t layer) {
  Mass m{};
  for (const Outcome& o : runs)
    for (size_t c = 0; c < 2; ++c)
      for (size_t k = 0; k < kKinds; ++k)
        m[c][k] += (trained ? o.trained : o.untrained).mass[layer][c][k] /
                   static_cast<double>(runs.size());
  return m;
}

void report_tables(const std::vector<Outcome>& runs, RunContext& ctx) {
  const std::vector<std::pair<std::string, double Reading::*>> columns{
      {"readout: right sense", &Reading::sense_accuracy},
      {"readout: right word", &Reading::word_accuracy},
      {"static embedding: largest distance", &Reading::static_distance},
      {"probe on static embedding", &Reading::probe_static},
      {"probe on output", &Reading::probe_output},
      {"output: cos distance between senses", &Reading::between},
      {"output: spread within a sense", &Reading::within},
      {"attention shift (last layer)", &Reading::attention_shift}};
  Table t("What \"bank\" carries on held-out sentences (mean ± sd over seeds)",
          {"quantity", "before training", "trained"});
  for (const auto& [name, field] : columns) {
    std::vector<std::string> row{name};
    for (bool trained : {false, true})
      row.push_back(kit::spread_text(spread(runs, trained, field)));
    t.add_row(row);
  }
  ctx.table(t);
  std::vector<std::string> header{"model", "layer", "sentence sense"};
  for (const char* k : kKindNames) header.push_back(fmt::format("per word: {}", k));
  Table a("Attention from \"bank\": weight per word of each kind (heads averaged, mean of seeds)",
          header);
  for (bool trained : {false, true})
    for (size_t l = 0; l < runs.front().trained.mass.size(); ++l) {
      const Mass m = mean_mass(runs, trained, l);
      for (size_t c = 0; c < 2; ++c) {
        std::vector<std::string> row{trained ? "trained" : "before training",
                                     fmt::format("{}", l + 1), c == 0 ? "river" : "money"};
        for (double x : m[c]) row.push_back(fixed(x));
        a.add_row(row);
      }
    }
  ctx.table(a);
}

void figures(const std::vector<Outcome>& runs, RunContext& ctx) {
  const size_t last = runs.front().trained.mass.size() - 1;
  std::vector<BarChart> panels;
  for (bool trained : {false, true}) {
    const Mass m = mean_mass(runs, trained, last);
    panels.push_back({.labels = {std::begin(kKindNames), std::end(kKindNames)},
                      .series = {{"river sentences", {m[0].begin(), m[0].end()}, ""},
                                 {"money sentences", {m[1].begin(), m[1].end()}, ""}},
                      .title = trained ? "trained" : "before training",
                      .y_label = "attention weight per word"});
  }
  ctx.figure("bank_row", bar_panels_svg(panels, "The last layer's attention row from \"bank\""),
             "Where \"bank\" looks in river and in money sentences (mean over seeds)");
  BarChart p{.labels = {"static embedding", "output at bank"},
             .title = "Reading the sense with a nearest-centroid probe (held-out half)",
             .y_label = "probe accuracy",
             .y_max = 1};
  for (bool trained : {false, true})
    p.series.push_back({trained ? "trained" : "before training",
                        {spread(runs, trained, &Reading::probe_static).mean,
                         spread(runs, trained, &Reading::probe_output).mean},
                        ""});
  ctx.figure("probe", bar_chart_svg(p), "The sense read from one vector and from the output");
  LinePlot c = kit::line_plot("Seed 1 during training", "step", "held-out accuracy");
  c.series = {
      kit::eval_series(runs.front().fit, "sense_accuracy", "readout: right sense"),
      kit::eval_series(runs.front().fit, "word_accuracy", "readout: right word (at best 1/6)")};
  c.series.back().dashed = true;
  ctx.figure("training", line_plot_svg(c), "The readout's accuracy while training");
}

void compare(const ReadoutTraining& w, const std::vector<Outcome>& runs, RunContext& ctx) {
  // Tolerances: three standard deviations over seeds, never below three standard errors of a
  // rate measured on the probe's held-out half (1.5 / sqrt(n)), which a few seeds can miss.
  const double three_se = 1.5 / std::sqrt(static_cast<double>(w.eval_size / 2));
  const Spread sense = spread(runs, true, &Reading::sense_accuracy);
  const Spread distance = spread(runs, true, &Reading::static_distance);
  const Spread on_static = spread(runs, true, &Reading::probe_static);
  const Spread on_output = spread(runs, true, &Reading::probe_output);
  const Spread between = spread(runs, true, &Reading::between);
  const Spread within = spread(runs, true, &Reading::within);
  const Spread shift = spread(runs, true, &Reading::attention_shift);
  const Spread shift_before = spread(runs, false, &Reading::attention_shift);
  // A readout that learned nothing names the right sense half the time.
  const double learned = 0.5 + 1.5 / std::sqrt(static_cast<double>(w.eval_size));
  const std::string metric = "readout's right-sense rate";
  DocumentComparison cmp(
      fmt::format("000: one word in two contexts (\"bank\") vs ours (mean of {} seeds)", w.seeds));
  // A lookup: the same row of the embedding table in every sentence, so 0 is exact.
  cmp.add("the static embedding of bank is one vector (largest distance between two sentences)",
          0.0, distance.mean, 0, "the embedding lookup depends on the sentence")
      .exact_quantity();
  // One vector for every sentence: the probe gives every sentence the same sense and scores the
  // share of that sense in the balanced half, 0.5 exactly.
  cmp.add("a probe reads the sense from the static embedding at chance", 0.5, on_static.mean,
          std::max(3 * on_static.sd, three_se), "the static embedding carries the sense")
      .exact_quantity();
  cmp.add("a probe reads the sense from the output at bank", 1.0, on_output.mean,
          std::max(3 * on_output.sd, three_se), "the output at bank carries the sense only partly")
      .needs_training(sense.mean, learned, metric);
  cmp.add_exact(
         "the output at bank differs by context (cosine distance between the senses' means "
         "beyond the spread within a sense, by 3 sd of seeds)",
         "yes", kit::yes_no(between.mean - 3 * between.sd > within.mean + 3 * within.sd),
         "a sentence's output is as far from its own sense's mean as the two means are apart")
      .needs_training(sense.mean, learned, metric);
  cmp.add_exact(
         "the attention row from bank differs by context (more weight per word on its own "
         "sense's words than on the other's, beyond the untrained model's by 3 sd of seeds)",
         "yes",
         kit::yes_no(shift.mean - 3 * shift.sd > std::abs(shift_before.mean) + 3 * shift_before.sd),
         "the trained row weighs the two senses' words alike: the sense is read without "
         "attending to it selectively")
      .needs_training(sense.mean, learned, metric);
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  const ReadoutTraining w(cfg, ctx.seed());
  Generator held_gen(w.seed + 999);
  const BankSet held = draw_bank(w.eval_size, held_gen);
  ctx.note(fmt::format("Held-out sentences: \"{}\" (river), \"{}\" (money)",
                       fmt::join(bank_words(held.ids, 0), " "),
                       fmt::join(bank_words(held.ids, 1), " ")));
  std::vector<Outcome> runs;
  for (int64_t s = 0; s < w.seeds; ++s) runs.push_back(train_one(w, ctx, s, held));
  const Mass last = mean_mass(runs, true, runs.front().trained.mass.size() - 1);
  kit::record(ctx, {{"sense_accuracy", per_seed(runs, true, &Reading::sense_accuracy)},
                    {"word_accuracy", per_seed(runs, true, &Reading::word_accuracy)},
                    {"static_distance", per_seed(runs, true, &Reading::static_distance)},
                    {"probe_static", per_seed(runs, true, &Reading::probe_static)},
                    {"probe_output", per_seed(runs, true, &Reading::probe_output)},
                    {"probe_output_untrained", per_seed(runs, false, &Reading::probe_output)},
                    {"cos_between", per_seed(runs, true, &Reading::between)},
                    {"cos_within", per_seed(runs, true, &Reading::within)},
                    {"attention_shift", per_seed(runs, true, &Reading::attention_shift)},
                    {"attention_shift_untrained", per_seed(runs, false, &Reading::attention_shift)},
                    {"last_layer_per_word_river_sentences", last[0]},
                    {"last_layer_per_word_money_sentences", last[1]}});
  report_tables(runs, ctx);
  figures(runs, ctx);
  compare(w, runs, ctx);
}

}  // namespace

Experiment context_bank() {
  Experiment e;
  e.name = "context-bank";
  e.source = "000 (dynamic topology), 004 §1.3";
  e.purpose = "One word in two contexts: one static embedding, two attention rows and outputs";
  e.config.add_int("seeds", 3, "seeds (their spread sets the tolerances)", {.min = 1, .max = 20});
  add_model_fields(e.config, {.d_model = 32, .nhead = 2, .num_layers = 2, .dim_ff = 64});
  add_optimizer_fields(e.config, {.steps = 400, .batch_size = 64, .lr = 3e-3});
  add_eval_fields(e.config, {.eval_size = 1000, .eval_every = 50});
  e.quick = {{"steps", "150"}, {"seeds", "2"}, {"eval_size", "200"}, {"eval_every", "50"}};
  e.check = [](const Config& c) {
    check_model(c);
    if (c.get_int("eval_size") % 4 != 0)  // two halves, each with as many river as money rows
      throw UsageError(fmt::format("context-bank: --eval_size {} is not a multiple of 4",
                                   c.get_int("eval_size")));
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
