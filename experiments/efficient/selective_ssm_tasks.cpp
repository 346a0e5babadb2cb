// selective-ssm's part 3: selective copying and associative recall learned by three MixerModels
// (softmax, linear attention, S6) of about equal parameter counts, then the trained S6 model's
// Delta at data, noise and marker tokens. The task's answer is the last K positions of the input
// (K answers for selective copying, one per marker; K = 1 for recall): the loss is the
// cross-entropy of those K positions only; the positions before them carry no target (the model
// reads them, and nothing asks it to predict them). K = 1 uses the model's last-position
// read-out, MixerModel::forward.
#include "experiments/efficient/selective_ssm_tasks.h"

#include <tuple>

#include "experiments/common/s6_probe.h"
#include "experiments/common/ssm_mixer.h"
#include "experiments/kit/kit.h"
#include "nn/ssm/selective_ssm.h"

namespace attn::experiments {

namespace {

// ---- training on the answer positions ---------------------------------------------------------

struct AnswerBatch {
  Tensor ids;      // (B,T)
  Tensor answers;  // (B,K) class ids
};

// B examples of `task`; every example must have the same source length and K = tgt.size() >= 1.
AnswerBatch answer_batch(const data::Task& task, int64_t b, Generator& gen) {
  std::vector<data::Example> exs;
  for (int64_t i = 0; i < b; ++i) exs.push_back(task.sample(gen));
  const auto t = static_cast<int64_t>(exs.front().src.size());
  const auto k = static_cast<int64_t>(exs.front().tgt.size());
  AnswerBatch out{Tensor({b, t}), Tensor({b, std::max<int64_t>(k, 1)})};
  for (int64_t i = 0; i < b; ++i) {
    const data::Example& ex = exs[static_cast<size_t>(i)];
    if (static_cast<int64_t>(ex.src.size()) != t || static_cast<int64_t>(ex.tgt.size()) != k ||
        k < 1)
      throw Error(
          fmt::format("answer_batch: {} examples must share one source length and have a "
                      "non-empty answer of one length",
                      task.name()));
    for (int64_t j = 0; j < t; ++j)
      out.ids[i * t + j] = static_cast<real>(ex.src[static_cast<size_t>(j)]);
    for (int64_t j = 0; j < k; ++j)
      out.answers[i * k + j] = static_cast<real>(ex.tgt[static_cast<size_t>(j)]);
  }
  return out;
}

// The logits of the last k positions, (B,k,classes).
Var answer_logits(const MixerModel& m, const Tensor& ids, int64_t k) {
  const int64_t b = ids.size(0), t = ids.size(1), c = m.options().classes;
  if (k == 1) return reshape(m.forward(ids), {b, 1, c});
  return slice(m.forward_positions(ids), 1, t - k, t);
}

// Accuracies on `set`: (token, whole answer).
std::pair<double, double> answer_accuracy(const MixerModel& m,
                                          const std::vector<AnswerBatch>& set) {
  NoGrad off;
  int64_t tokens_right = 0, tokens = 0, answers_right = 0, answers = 0;
  const int64_t c = m.options().classes;
  for (const AnswerBatch& b : set) {
    const int64_t n = b.answers.size(0), k = b.answers.size(1);
    const Tensor logits = answer_logits(m, b.ids, k).value();  // (n,k,c)
    for (int64_t i = 0; i < n; ++i) {
      bool all = true;
      for (int64_t j = 0; j < k; ++j) {
        const bool right = kit::argmax(logits.data() + (i * k + j) * c, c) ==
                           static_cast<int64_t>(b.answers[i * k + j]);
        tokens_right += right;
        all = all && right;
        ++tokens;
      }
      answers_right += all;
      ++answers;
    }
  }
  return {static_cast<double>(tokens_right) / static_cast<double>(tokens),
          static_cast<double>(answers_right) / static_cast<double>(answers)};
}

struct AnswerRun {
  std::vector<double> curve_steps, curve_loss;  // step at the end of each block, its mean loss
  double token_accuracy = 0, answer_accuracy = 0;
  double seconds = 0;  // training time
};

// Trains with Adam (--steps, --batch_size, --lr, clip 1) on fresh batches (data drawn from
// seed + 1; the --eval_size held-out examples from seed + 2, a stream the training never sees).
AnswerRun train_on_answers(MixerModel& m,
                           const data::Task& task,
                           const Config& cfg,
                           uint64_t seed) {
  Generator data_gen(seed + 1), eval_gen(seed + 2);
  const train::FitSettings s{.name = task.name(),
                             .steps = cfg.get_int("steps"),
                             .batch_size = cfg.get_int("batch_size"),
                             .optimizer = {.lr = cfg.get_real("lr"), .clip = 1.0}};  // Adam
  const int64_t log_every = std::max<int64_t>(1, s.steps / 40);
  AnswerRun run;
  m.train();
  const train::TrainResult r = train::fit(m, s, [&](const train::BatchPart& part) {
    const AnswerBatch b = answer_batch(task, s.batch_size, data_gen);
    const Tensor answers = part.rows(b.answers);
    return train::StepLoss{
        cross_entropy(answer_logits(m, part.rows(b.ids), answers.size(1)), answers),
        answers.numel()};
  });
  run.seconds = r.wall_seconds;
  // The curve: the mean loss of each block of log_every steps (the last block may be shorter).
  double block = 0;
  int64_t in_block = 0;
  for (size_t i = 0; i < r.losses.size(); ++i) {
    block += r.losses[i];
    if (++in_block == log_every || i + 1 == r.losses.size()) {
      run.curve_steps.push_back(static_cast<double>(i + 1));
      run.curve_loss.push_back(block / static_cast<double>(in_block));
      block = 0;
      in_block = 0;
    }
  }
  m.eval();
  std::vector<AnswerBatch> held_out;
  for (int64_t left = cfg.get_int("eval_size"); left > 0; left -= 250)
    held_out.push_back(answer_batch(task, std::min<int64_t>(250, left), eval_gen));
  std::tie(run.token_accuracy, run.answer_accuracy) = answer_accuracy(m, held_out);
  return run;
}

// ---- the three mixers -------------------------------------------------------------------------

struct MixerKind {
  std::string name;
  std::function<Mixer(int64_t d_model, Generator& gen)> make;
};

std::vector<MixerKind> mixer_kinds(const Config& cfg) {
  const int64_t nhead = cfg.get_int("nhead");
  return {
      {"softmax", [nhead](int64_t d, Generator& g) { return softmax_mixer(d, nhead, true, g); }},
      {"linear", [nhead](int64_t d, Generator& g) { return linear_mixer(d, nhead, true, g); }},
      {"s6", [n = cfg.get_int("d_state"), chunk = cfg.get_int("chunk")](int64_t d, Generator& g) {
         return s6_mixer(d, n, g, {.chunk = chunk});
       }}};
}

MixerModelOptions body(const Config& cfg, const data::Task& task, int64_t d_model) {
  return {.vocab = task.tokenizer().vocab_size(),
          .max_len = task.max_src_len(),
          .d_model = d_model,
          .layers = cfg.get_int("num_layers"),
          .classes = task.num_classes()};
}

std::unique_ptr<MixerModel> build(
    const Config& cfg, const data::Task& task, const MixerKind& kind, int64_t d, uint64_t seed) {
  Generator init(seed);
  return std::make_unique<MixerModel>(
      body(cfg, task, d), [&](int64_t, Generator& g) { return kind.make(d, g); }, init);
}

// The width (a multiple of nhead, from 2 nhead up to 4 d_model) whose model has the parameter count
// closest to `target`.
int64_t matched_width(const Config& cfg,
                      const data::Task& task,
                      const MixerKind& kind,
                      int64_t target) {
  const int64_t step = cfg.get_int("nhead");
  int64_t best = cfg.get_int("d_model"), best_gap = -1;
  for (int64_t d = 2 * step; d <= 4 * cfg.get_int("d_model"); d += step) {
    const int64_t gap = std::abs(build(cfg, task, kind, d, 0)->num_parameters() - target);
    if (best_gap < 0 || gap < best_gap) best = d, best_gap = gap;
  }
  return best;
}

// ---- Delta of the trained S6 model on selective copying (§9.4) --------------------------------

Selection selection(const MixerModel& s6, const data::SelectiveCopyTask& task, uint64_t seed) {
  Generator gen(seed);
  const AnswerBatch b = answer_batch(task, 200, gen);
  const Tensor delta = first_layer_delta(s6, b.ids);  // (B,T,E)
  const int64_t n = delta.size(0), t = delta.size(1), e = delta.size(2);
  std::vector<double> sum[3], count(3, 0.0);  // per kind (data, noise, marker), per channel
  for (auto& v : sum) v.assign(static_cast<size_t>(e), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < t; ++j) {
      const auto id = static_cast<int64_t>(b.ids[i * t + j]);
      const int kind = id == task.marker_id() ? 2 : id == task.noise_id() ? 1 : 0;
      count[static_cast<size_t>(kind)] += 1;
      for (int64_t c = 0; c < e; ++c)
        sum[kind][static_cast<size_t>(c)] += static_cast<double>(delta[(i * t + j) * e + c]);
    }
  Selection s;
  s.channels = e;
  double* means[3] = {&s.data, &s.noise, &s.marker};
  for (int k = 0; k < 3; ++k) {
    for (double v : sum[k]) *means[k] += v;
    *means[k] /= count[static_cast<size_t>(k)] * static_cast<double>(e);
  }
  for (int64_t c = 0; c < e; ++c)
    s.channels_data_above_noise +=
        sum[0][static_cast<size_t>(c)] / count[0] > sum[1][static_cast<size_t>(c)] / count[1];
  s.channels_data_above_noise /= static_cast<double>(e);
  return s;
}

// Every mixer of mixer_kinds trained on each task; run j is tasks[j / kinds] and kinds[j % kinds].
struct MixerRun {
  int64_t width = 0;
  std::unique_ptr<MixerModel> model;
  AnswerRun run;
};

std::vector<MixerRun> train_all(const Config& cfg,
                                const std::vector<TaskPart>& tasks,
                                uint64_t seed) {
  const std::vector<MixerKind> kinds = mixer_kinds(cfg);
  const int64_t d = cfg.get_int("d_model");
  // The runs are independent (each builds and trains from generators of its own), so they train
  // side by side.
  return kit::side_by_side(tasks.size() * kinds.size(), [&](size_t j) {
    const data::Task& task = *tasks[j / kinds.size()].task;
    const MixerKind& kind = kinds[j % kinds.size()];
    MixerRun r;
    r.width =
        kind.name == "softmax"
            ? d
            : matched_width(cfg, task, kind, build(cfg, task, kinds[0], d, 0)->num_parameters());
    r.model = build(cfg, task, kind, r.width, seed + 17);
    r.run = train_on_answers(*r.model, task, cfg, seed + 29);
    return r;
  });
}

// One task's table, results, curves and figure from its runs.
TaskResult report_task(const Config& cfg,
                       RunContext& ctx,
                       const TaskPart& part,
                       std::vector<MixerRun>::iterator runs_begin) {
  const std::vector<MixerKind> kinds = mixer_kinds(cfg);
  const std::string &key = part.key, &title = part.title;
  const int64_t target =
      build(cfg, *part.task, kinds[0], cfg.get_int("d_model"), 0)->num_parameters();
  TaskResult r;
  std::vector<AnswerRun> runs;
  Table t(title, {"mixer", "d_model", "parameters", "vs softmax", "token accuracy",
                  "whole-answer accuracy", "train s"});
  for (size_t k = 0; k < kinds.size(); ++k) {
    MixerRun& mr = runs_begin[static_cast<std::ptrdiff_t>(k)];
    const AnswerRun& run = mr.run;
    r.mixers.push_back(kinds[k].name);
    r.widths.push_back(mr.width);
    r.params.push_back(mr.model->num_parameters());
    r.token_acc.push_back(run.token_accuracy);
    r.answer_acc.push_back(run.answer_accuracy);
    r.seconds.push_back(run.seconds);
    runs.push_back(run);
    r.models.push_back(std::move(mr.model));
    t.add_row({kinds[k].name, std::to_string(mr.width), std::to_string(r.params.back()),
               fmt::format("{:+.1f}%", 100.0 * (static_cast<double>(r.params.back()) / target - 1)),
               fixed(run.token_accuracy, 3), fixed(run.answer_accuracy, 3), fixed(run.seconds, 1)});
  }
  ctx.table(t);
  ctx.result(key + "_mixers", r.mixers);
  ctx.result(key + "_d_model", r.widths);
  ctx.result(key + "_parameters", r.params);
  ctx.result(key + "_token_accuracy", r.token_acc);
  ctx.result(key + "_answer_accuracy", r.answer_acc);
  ctx.result(key + "_train_seconds", r.seconds);
  CsvWriter csv = ctx.csv(key + "_curves", {"mixer", "step", "loss"});
  LinePlot p = kit::line_plot(title + ": training loss", "step",
                              "cross-entropy of the answer positions", kit::Axes::kLogY);
  for (size_t i = 0; i < runs.size(); ++i) {
    p.series.push_back({r.mixers[i], runs[i].curve_steps, runs[i].curve_loss, "", false, false});
    for (size_t j = 0; j < runs[i].curve_steps.size(); ++j)
      csv.row({static_cast<double>(i), runs[i].curve_steps[j], runs[i].curve_loss[j]});
  }
  ctx.figure(key + "_loss", line_plot_svg(p), title + ": training loss per mixer");
  return r;
}

}  // namespace

std::vector<TaskResult> task_parts(const Config& cfg,
                                   RunContext& ctx,
                                   const std::vector<TaskPart>& tasks) {
  std::vector<MixerRun> runs = train_all(cfg, tasks, ctx.seed());
  const auto kinds = static_cast<std::ptrdiff_t>(mixer_kinds(cfg).size());
  std::vector<TaskResult> out;
  for (size_t i = 0; i < tasks.size(); ++i)
    out.push_back(
        report_task(cfg, ctx, tasks[i], runs.begin() + kinds * static_cast<std::ptrdiff_t>(i)));
  return out;
}

size_t index_of(const TaskResult& r, const std::string& mixer) {
  return static_cast<size_t>(std::find(r.mixers.begin(), r.mixers.end(), mixer) - r.mixers.begin());
}

Selection delta_part(const MixerModel& s6, const data::SelectiveCopyTask& copy, RunContext& ctx) {
  const Selection sel = selection(s6, copy, ctx.seed() + 71);
  ctx.note(fmt::format(
      "The trained S6 model's first layer, on 200 fresh selective-copy inputs: mean Delta {:.3g} "
      "at data tokens, {:.3g} at noise, {:.3g} at the markers (ratio data / noise {:.2f}); {:.0f}% "
      "of its {} channels have a larger mean Delta at data than at noise.",
      sel.data, sel.noise, sel.marker, sel.data / sel.noise, 100 * sel.channels_data_above_noise,
      sel.channels));
  ctx.result("copy_delta_data", sel.data);
  ctx.result("copy_delta_noise", sel.noise);
  ctx.result("copy_delta_marker", sel.marker);
  ctx.result("copy_delta_channels_data_above_noise", sel.channels_data_above_noise);
  return sel;
}

}  // namespace attn::experiments
