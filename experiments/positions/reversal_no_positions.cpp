// reversal-no-positions [002 Exercise 39.4]: one self-attention layer and nothing else
// (embedding -> self-attention -> linear readout to the vocabulary) trained on fixed-length
// reversal, without positions and then with learned (and sinusoidal) positions.
//
//   attnlab run reversal-no-positions
//   attnlab run reversal-no-positions --seq_len 9 --alphabet 5 --steps 3000
//
// Why it cannot work without positions: self-attention without positions is permutation-
// equivariant (Exercise 39.1), and so is everything else in this model (the embedding and the
// readout act on each position alone). Equivariance under the permutations that fix position i
// means output i is a function g(x_i, M) of the token at i and the multiset M of all tokens —
// the same g at every position. The target at i is x_{T-1-i}. Given a random sequence:
//  - T even: x_{T-1-i} is a uniform draw from the other T-1 tokens, which are i.i.d. and
//    independent of x_i, so the best any g can do is guess their most frequent token:
//    ceiling = E[max count of T-1 i.i.d. draws] / (T-1);
//  - T odd: averaged over positions the best g guesses the most frequent token of all of M
//    (the middle position's answer is x_i itself, and it cannot know it is the middle):
//    ceiling = E[max count of T draws] / T.
// Both exceed 1/|alphabet| (guessing a frequent token beats a blind guess) but stay far from 1.
// The expectations are computed exactly below (expected_max_count).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "data/tasks/sequence.h"
#include "experiments/common/values.h"
#include "experiments/experiment.h"
#include "experiments/report/charts.h"
#include "experiments/report/heatmap.h"
#include "experiments/run_context.h"
#include "nn/attention/multihead_attention.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/positional/learned.h"
#include "nn/positional/sinusoidal.h"
#include "train/fit.h"

namespace attn::experiments {

namespace {

enum class Positions { kNone, kLearned, kSinusoidal };
const char* name_of(Positions p) {
  return p == Positions::kNone ? "none" : p == Positions::kLearned ? "learned" : "sinusoidal";
}

// Embedding (+ positions) -> one self-attention layer -> linear readout. No FFN, no residual,
// no norm: the exercise's "single self-attention layer with no other components".
class OneLayerAttention : public nn::Module {
 public:
  OneLayerAttention(
      int64_t vocab, int64_t seq_len, int64_t d_model, int64_t heads, Positions pos, Generator& gen)
      : Module("OneLayerAttention") {
    emb = register_module("emb", std::make_shared<nn::Embedding>(vocab, d_model, gen));
    if (pos == Positions::kLearned)
      learned = register_module(
          "pos", std::make_shared<nn::LearnedPositionalEmbedding>(seq_len, d_model, gen));
    if (pos == Positions::kSinusoidal)
      sinusoidal = register_module(
          "pos", std::make_shared<nn::SinusoidalPositionalEncoding>(seq_len, d_model));
    attn = register_module("attn", std::make_shared<nn::MultiheadAttention>(d_model, heads, gen));
    readout = register_module("readout", std::make_shared<nn::Linear>(d_model, vocab, true, gen));
  }

  // ids (B,T) -> out: logits (B,T,V), weights (B,H,T,T).
  nn::AttentionOutput forward(const Tensor& ids) const {
    Var x = emb->forward(ids);  // (B,T,d)
    if (learned) x = learned->forward(x);
    if (sinusoidal) x = sinusoidal->forward(x);
    nn::AttentionOutput a = attn->forward(x, x, x);
    return {readout->forward(a.out), a.weights};
  }

  std::shared_ptr<nn::Embedding> emb;
  std::shared_ptr<nn::LearnedPositionalEmbedding> learned;
  std::shared_ptr<nn::SinusoidalPositionalEncoding> sinusoidal;
  std::shared_ptr<nn::MultiheadAttention> attn;
  std::shared_ptr<nn::Linear> readout;
};

// A batch of reversal examples as model ids in [0, V) (the task's ids minus its specials).
struct Batch {
  Tensor ids, targets;  // (B,T) each
};

Batch sample_batch(const data::SequenceTask& task, int64_t batch, Generator& gen) {
  const int64_t t = task.config().max_len;
  Batch b{Tensor({batch, t}), Tensor({batch, t})};
  for (int64_t r = 0; r < batch; ++r) {
    const data::Example ex = task.sample(gen);
    for (int64_t i = 0; i < t; ++i) {
      b.ids[r * t + i] = static_cast<real>(ex.src[i] - data::kNumSpecial);
      b.targets[r * t + i] = static_cast<real>(ex.tgt[i] - data::kNumSpecial);
    }
  }
  return b;
}

// E[max_k count_k] for n i.i.d. uniform draws from v categories, exactly:
// P(max <= m) = n! [x^n] (sum_{k<=m} (x/v)^k / k!)^v, and E[max] = sum_{m>=0} P(max > m).
double expected_max_count(int64_t n, int64_t v) {
  double e = 0;
  for (int64_t m = 0; m < n; ++m) {
    std::vector<double> term(m + 1), poly(n + 1, 0.0);
    double f = 1;
    for (int64_t k = 0; k <= m; ++k) {
      term[k] = f;  // (1/v)^k / k!
      f /= static_cast<double>(v) * static_cast<double>(k + 1);
    }
    poly[0] = 1;
    for (int64_t c = 0; c < v; ++c) {  // multiply by `term` v times, keeping degrees <= n
      std::vector<double> next(n + 1, 0.0);
      for (int64_t i = 0; i <= n; ++i)
        if (poly[i] != 0)
          for (int64_t k = 0; k <= m && i + k <= n; ++k) next[i + k] += poly[i] * term[k];
      poly.swap(next);
    }
    double at_most = poly[n];
    for (int64_t k = 2; k <= n; ++k) at_most *= static_cast<double>(k);
    e += 1.0 - at_most;
  }
  return e;
}

// The best accuracy any function g(x_i, multiset) can reach on random sequences (see the top).
double order_free_ceiling(int64_t seq_len, int64_t alphabet) {
  const int64_t n = seq_len % 2 == 0 ? seq_len - 1 : seq_len;
  return expected_max_count(n, alphabet) / static_cast<double>(n);
}

// The first n rows of a (B,T) tensor.
Tensor slice_rows(const Tensor& x, int64_t n) {
  Tensor out({n, x.size(1)});
  std::copy(x.data(), x.data() + out.numel(), out.data());
  return out;
}

struct Evaluation {
  double loss = 0, accuracy = 0, sequence_accuracy = 0;
  double anti_diagonal = 0;  // mean attention weight (over heads) of query i on key T-1-i
  std::vector<double> per_position;
};

Evaluation evaluate(const OneLayerAttention& model, const Batch& data) {
  NoGrad off;
  const nn::AttentionOutput o = model.forward(data.ids);
  const Tensor& logits = o.out.value();  // (B,T,V)
  const Tensor& w = o.weights.value();   // (B,H,T,T)
  const int64_t b = logits.size(0), t = logits.size(1), v = logits.size(2), h = w.size(1);
  Evaluation e;
  e.loss = cross_entropy(o.out, data.targets).item();
  e.per_position.assign(t, 0.0);
  int64_t whole = 0;
  for (int64_t r = 0; r < b; ++r) {
    bool all = true;
    for (int64_t i = 0; i < t; ++i) {
      const real* row = logits.data() + (r * t + i) * v;
      const int64_t guess = std::max_element(row, row + v) - row;
      const bool ok = guess == static_cast<int64_t>(data.targets[r * t + i]);
      e.per_position[i] += ok;
      all = all && ok;
      for (int64_t hh = 0; hh < h; ++hh)
        e.anti_diagonal += w[((r * h + hh) * t + i) * t + t - 1 - i];
    }
    whole += all;
  }
  for (double& p : e.per_position) p /= static_cast<double>(b);
  e.accuracy = std::accumulate(e.per_position.begin(), e.per_position.end(), 0.0) / t;
  e.sequence_accuracy = static_cast<double>(whole) / static_cast<double>(b);
  e.anti_diagonal /= static_cast<double>(b * t * h);
  return e;
}

// max |f(X P)[:, i] - f(X)[:, perm[i]]| over the logits: ~0 means equivariant.
double equivariance_error(const OneLayerAttention& model,
                          const Tensor& ids,
                          const std::vector<int64_t>& perm) {
  NoGrad off;
  const int64_t b = ids.size(0), t = ids.size(1);
  Tensor permuted({b, t});
  for (int64_t r = 0; r < b; ++r)
    for (int64_t i = 0; i < t; ++i) permuted[r * t + i] = ids[r * t + perm[i]];
  const Tensor a = model.forward(ids).out.value(), p = model.forward(permuted).out.value();
  const int64_t v = a.size(2);
  double m = 0;
  for (int64_t r = 0; r < b; ++r)
    for (int64_t i = 0; i < t; ++i)
      for (int64_t c = 0; c < v; ++c)
        m = std::max(m, static_cast<double>(
                            std::fabs(p[(r * t + i) * v + c] - a[(r * t + perm[i]) * v + c])));
  return m;
}

struct Trained {
  Positions pos;
  std::shared_ptr<OneLayerAttention> model;
  std::vector<double> loss;                       // training loss per step
  std::vector<double> eval_steps, eval_accuracy;  // held-out accuracy during training
  Evaluation final;
  int64_t first_step_50 = -1;  // first evaluated step with accuracy >= 0.5
  int64_t first_step_90 = -1;  // and >= 0.9
};

struct Settings {
  int64_t vocab, seq_len, d_model, heads, steps, batch, eval_every;
  double lr;
};

Trained train(Positions pos,
              const Settings& s,
              const data::SequenceTask& task,
              const Batch& held_out,
              uint64_t seed) {
  Generator gen(seed);
  Trained tr{pos,
             std::make_shared<OneLayerAttention>(s.vocab, s.seq_len, s.d_model, s.heads, pos, gen)};
  // The curve is measured often on the first (up to) 500 held-out sequences; the final numbers
  // on all of them.
  const int64_t n_curve = std::min<int64_t>(500, held_out.ids.size(0));
  const Batch curve_set{slice_rows(held_out.ids, n_curve), slice_rows(held_out.targets, n_curve)};
  train::FitSettings fs;
  fs.name = name_of(pos);
  fs.steps = s.steps;
  fs.batch_size = s.batch;
  fs.optimizer.lr = s.lr;  // Adam, constant rate
  fs.eval_every = s.eval_every;
  const train::TrainResult r = train::fit(
      *tr.model, fs,
      [&](const train::BatchPart& part) {
        const Batch b = sample_batch(task, s.batch, gen);
        const Tensor targets = part.rows(b.targets);
        return train::StepLoss{cross_entropy(tr.model->forward(part.rows(b.ids)).out, targets),
                               targets.numel()};
      },
      [&](int64_t step) {
        const double acc = evaluate(*tr.model, curve_set).accuracy;
        tr.eval_steps.push_back(static_cast<double>(step));
        tr.eval_accuracy.push_back(acc);
        if (acc >= 0.5 && tr.first_step_50 < 0) tr.first_step_50 = step;
        if (acc >= 0.9 && tr.first_step_90 < 0) tr.first_step_90 = step;
        return train::Metrics{{"accuracy", acc}};
      });
  tr.loss = r.losses;
  tr.final = evaluate(*tr.model, held_out);
  return tr;
}

// The attention weights of a (1,T) input averaged over heads -> (T,T).
Tensor head_mean_attention(const OneLayerAttention& model, const Tensor& one) {
  NoGrad off;
  const Tensor w = model.forward(one).weights.value();  // (1,H,T,T)
  const int64_t h = w.size(1), t = w.size(2);
  Tensor mean({t, t});
  for (int64_t hh = 0; hh < h; ++hh)
    for (int64_t k = 0; k < t * t; ++k) mean[k] += w[hh * t * t + k] / static_cast<real>(h);
  return mean;
}

std::string pct(double x) {
  return fmt::format("{:.1f}%", 100 * x);
}

std::vector<double> steps_axis(size_t n) {
  std::vector<double> x(n);
  std::iota(x.begin(), x.end(), 1.0);
  return x;
}

void report_curves(const std::vector<Trained>& runs,
                   double chance,
                   double ceiling,
                   RunContext& ctx) {
  LinePlot loss;
  loss.title = "Training loss (cross-entropy per token)";
  loss.x_label = "step";
  loss.y_label = "loss";
  loss.log_y = true;
  loss.refs = {{RefLine::kHorizontal, std::log(1.0 / chance), "ln |alphabet| (uniform guess)"}};
  LinePlot acc;
  acc.title = "Held-out per-token accuracy during training";
  acc.x_label = "step";
  acc.y_label = "accuracy";
  acc.refs = {{RefLine::kHorizontal, ceiling, "order-free ceiling"},
              {RefLine::kHorizontal, chance, "chance 1/|alphabet|"}};
  // Wide CSVs: one column per model (every run has the same steps and evaluation steps).
  std::vector<std::string> loss_cols{"step"}, acc_cols{"step"};
  for (const Trained& r : runs) {
    loss.series.push_back({std::string("positions: ") + name_of(r.pos), steps_axis(r.loss.size()),
                           r.loss, "", false, false});
    acc.series.push_back({std::string("positions: ") + name_of(r.pos), r.eval_steps,
                          r.eval_accuracy, "", false, true});
    loss_cols.push_back(std::string("loss_") + name_of(r.pos));
    acc_cols.push_back(std::string("accuracy_") + name_of(r.pos));
  }
  CsvWriter loss_csv = ctx.csv("loss", loss_cols), acc_csv = ctx.csv("accuracy", acc_cols);
  for (size_t i = 0; i < runs[0].loss.size(); ++i) {
    std::vector<double> row{static_cast<double>(i + 1)};
    for (const Trained& r : runs) row.push_back(r.loss[i]);
    loss_csv.row(row);
  }
  for (size_t i = 0; i < runs[0].eval_steps.size(); ++i) {
    std::vector<double> row{runs[0].eval_steps[i]};
    for (const Trained& r : runs) row.push_back(r.eval_accuracy[i]);
    acc_csv.row(row);
  }
  ctx.figure("loss", line_plot_svg(loss), "Training loss with and without positions");
  ctx.figure("accuracy", line_plot_svg(acc),
             "Held-out accuracy: without positions it cannot pass the order-free ceiling");
}

void run(const Config& cfg, RunContext& ctx) {
  Settings s;
  s.seq_len = cfg.get_int("seq_len");
  s.vocab = cfg.get_int("alphabet");
  s.d_model = cfg.get_int("d_model");
  s.heads = cfg.get_int("nhead");
  s.steps = cfg.get_int("steps");
  s.batch = cfg.get_int("batch_size");
  s.lr = cfg.get_real("lr");
  s.eval_every = std::max<int64_t>(1, s.steps / 120);
  const std::string letters = "abcdefghijklmnopqrstuvwxyz";
  const data::SequenceTask task({.op = data::SequenceOp::kReverse,
                                 .min_len = s.seq_len,
                                 .max_len = s.seq_len,
                                 .alphabet = letters.substr(0, static_cast<size_t>(s.vocab))});
  const uint64_t seed = ctx.seed();
  Generator eval_gen(seed + 7919);
  const Batch held_out = sample_batch(task, cfg.get_int("eval_size"), eval_gen);

  // ---- the ceiling without order information ----
  const double chance = 1.0 / static_cast<double>(s.vocab);
  const double ceiling = order_free_ceiling(s.seq_len, s.vocab);
  const int64_t n_tokens = held_out.ids.numel();
  // Sampling noise of a held-out accuracy near the ceiling (tokens of a sequence are not
  // independent, so this is a rough scale, used with a 4-sigma margin).
  const double noise = std::sqrt(ceiling * (1 - ceiling) / (static_cast<double>(n_tokens) / 2));
  ctx.section("What a position-blind model can reach at best");
  ctx.note(fmt::format(
      "T = {}, alphabet of {}. Without positions output i can only be a function of the token at "
      "i and the multiset of all tokens (the same function at every position). Chance is 1/{} = "
      "{:.3f}; the best such function guesses the most frequent token of the others{}, which is "
      "right with probability {:.4f} (computed exactly). No amount of training can beat that.",
      s.seq_len, s.vocab, s.vocab, chance,
      s.seq_len % 2 == 0 ? "" : " (of all tokens, as T is odd and the middle answers itself)",
      ceiling));
  ctx.result("chance", chance);
  ctx.result("order_free_ceiling", ceiling);

  // ---- train the three models ----
  std::vector<Positions> kinds{Positions::kNone, Positions::kLearned};
  if (cfg.get_bool("sinusoidal")) kinds.push_back(Positions::kSinusoidal);
  std::vector<Trained> runs;
  for (Positions p : kinds) runs.push_back(train(p, s, task, held_out, seed));
  const Trained& none = runs[0];
  const Trained& learned = runs[1];

  ctx.section("Held-out accuracy after training");
  std::vector<std::string> header{"positions",  "token accuracy",         "whole sequences",
                                  "final loss", "attention on key T-1-i", "first step >= 90%"};
  for (int64_t i = 0; i < s.seq_len; ++i) header.push_back(fmt::format("pos {}", i));
  Table t(fmt::format("{} held-out sequences, {} steps", held_out.ids.size(0), s.steps), header);
  BarChart bars;
  bars.title = "Per-position held-out accuracy";
  bars.x_label = "output position";
  bars.y_label = "accuracy";
  bars.y_max = 1.0;
  bars.labels = index_labels(s.seq_len);
  for (const Trained& r : runs) {
    const Evaluation& e = r.final;
    std::vector<std::string> row{name_of(r.pos),
                                 pct(e.accuracy),
                                 pct(e.sequence_accuracy),
                                 fmt::format("{:.4f}", e.loss),
                                 fmt::format("{:.3f}", e.anti_diagonal),
                                 r.first_step_90 < 0 ? "never" : std::to_string(r.first_step_90)};
    for (double p : e.per_position) row.push_back(pct(p));
    t.add_row(row);
    bars.series.push_back({name_of(r.pos), e.per_position, ""});
    const std::string key = name_of(r.pos);
    ctx.result("accuracy_" + key, e.accuracy);
    ctx.result("sequence_accuracy_" + key, e.sequence_accuracy);
    ctx.result("final_loss_" + key, e.loss);
    ctx.result("per_position_accuracy_" + key, e.per_position);
    ctx.result("anti_diagonal_attention_" + key, e.anti_diagonal);
    ctx.result("first_step_50_" + key, r.first_step_50);
    ctx.result("first_step_90_" + key, r.first_step_90);
  }
  ctx.table(t);
  ctx.figure("per_position_accuracy", bar_chart_svg(bars),
             "Per-position accuracy: flat near the ceiling without positions, ~100% with them");
  report_curves(runs, chance, ceiling, ctx);

  // No-position accuracy at the middle and at the end of training: more steps do not help.
  const size_t half = none.eval_accuracy.size() / 2;
  const double none_mid = none.eval_accuracy[half > 0 ? half - 1 : 0];
  ctx.result("accuracy_none_half_training", none_mid);
  ctx.result("accuracy_margin", 4 * noise);

  // ---- equivariance, numerically ----
  ctx.section("Permutation equivariance, checked numerically");
  Generator perm_gen(seed + 31);
  std::vector<int64_t> perm(s.seq_len);
  std::iota(perm.begin(), perm.end(), 0);
  data::shuffle(perm, perm_gen);
  const Tensor probe = slice_rows(held_out.ids, 8);
  Table eq("max |f(permuted input)[i] - f(input)[perm[i]]| over the logits of 8 sequences",
           {"positions", "equivariance error"});
  for (const Trained& r : runs) {
    const double err = equivariance_error(*r.model, probe, perm);
    eq.add_row({name_of(r.pos), sig(err, 2)});
    ctx.result(std::string("equivariance_error_") + name_of(r.pos), err);
  }
  ctx.table(eq);
  ctx.note(fmt::format(
      "Permutation used: [{}]. Without positions, permuting the input permutes the logits and "
      "nothing else (error at float rounding); with positions the outputs change.",
      fmt::join(perm, ", ")));

  // ---- the attention maps on one held-out sequence ----
  ctx.section("What the layers attend to, on one held-out sequence");
  Tensor one({1, s.seq_len});
  std::copy(held_out.ids.data(), held_out.ids.data() + s.seq_len, one.data());
  std::vector<std::string> labels;
  for (int64_t i = 0; i < s.seq_len; ++i)
    labels.push_back(fmt::format("{}:{}", i, letters[static_cast<size_t>(one[i])]));
  for (const Trained* r : {&learned, &none}) {
    const std::string key = name_of(r->pos);
    const Tensor mean = head_mean_attention(*r->model, one);
    Heatmap hm = attention_heatmap(mean, labels, labels,
                                   "Positions: " + key + ", attention (mean over heads)");
    hm.annotate = s.seq_len <= 12;
    ctx.matrix("attention_example_" + key, mean, labels, labels, 2);
    ctx.figure("attention_" + key, heatmap_svg(hm),
               r == &learned
                   ? "Learned positions: each output position attends to its mirror position "
                     "(the anti-diagonal)"
                   : "No positions: the weights depend only on the tokens, so equal tokens get "
                     "equal rows and columns, wherever they stand");
  }

  // ---- the exercise's claims ----
  const double bound = ceiling + 4 * noise;
  DocumentComparison cmp("002 Exercise 39.4 vs ours");
  cmp.add_exact("no positions: the layer cannot solve reversal", "True",
                none.final.accuracy < 0.95 ? "True" : "False",
                ceiling < 0.95 ? ""
                               : fmt::format("the order-free ceiling is {:.3f} here: with T = 2 "
                                             "the answer is 'the other token', which a "
                                             "position-blind model can compute",
                                             ceiling));
  cmp.add_exact("no positions: accuracy stays at or below the order-free ceiling", "True",
                none.final.accuracy <= bound ? "True" : "False",
                "the exercise gives no number; the ceiling is ours (see the first section)");
  cmp.add_exact("learned positions: it works (token accuracy >= 95%)", "True",
                learned.final.accuracy >= 0.95 ? "True" : "False");
  ctx.compare(cmp);
  ctx.note(fmt::format(
      "Without positions the layer reaches {} (half-way through training {}), against chance {} "
      "and the order-free ceiling {}: it learns the one thing available, guessing a frequent "
      "token, and stays there. With learned positions it reaches {} ({} of whole sequences); the "
      "attention of query i concentrates on key T-1-i (mean weight {:.2f}). The exercise says it "
      "'suddenly' works: measured every {} steps on 500 held-out sequences, the learned model "
      "passes 50% at step {} and 90% at step {} of {} (-1: never).",
      pct(none.final.accuracy), pct(none_mid), pct(chance), pct(ceiling),
      pct(learned.final.accuracy), pct(learned.final.sequence_accuracy),
      learned.final.anti_diagonal, s.eval_every, learned.first_step_50, learned.first_step_90,
      s.steps));
}

}  // namespace

Experiment reversal_no_positions() {
  Experiment e;
  e.name = "reversal-no-positions";
  e.source = "002 Exercise 39.4";
  e.purpose = "One attention layer cannot reverse without positions; with learned positions it can";
  e.typical_time = "~7 s";
  e.config.add_int("seq_len", 8, "length T of every sequence", {.min = 2, .max = 64})
      .add_int("alphabet", 8, "number of distinct tokens (letters a, b, ...)",
               {.min = 2, .max = 26})
      .add_int("eval_size", 2000, "held-out sequences", {.min = 8})
      .add_bool("sinusoidal", true, "also train with fixed sinusoidal positions")
      .add_int("seed", 0, "random seed (weights, data)", {.min = 0});
  add_model_fields(e.config, {.d_model = 32, .nhead = 1});
  add_optimizer_fields(e.config, {.steps = 600, .batch_size = 64, .lr = 1e-2});  // Adam, constant
  e.quick = {{"steps", "150"}, {"eval_size", "500"}, {"sinusoidal", "false"}};
  e.check = [](const Config& c) { require_divides(c, "nhead", "d_model"); };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
