// ablate-block [002 §39.8 "What we have, what we still need"]: the document names the parts a
// stack of self-attention still lacks: positions, layer norm with residual connections, and the
// position-wise feed-forward network. Here the full encoder-decoder block is trained on two
// tasks with one part removed at a time (plus the intact block), every variant for the same
// number of steps from the same seeds, and scored on held-out exact match, token accuracy and
// loss.
//
//   attnlab run ablate-block                    # ~1 min on 2 idle cores
//   attnlab run ablate-block --second_task copy --layers 4 --seeds 2
//
// The variants (TransformerLayerOptions switches, train --layer_norm/--residual/--feedforward):
//   intact        pre-norm blocks x = x + f(norm(x)), sinusoidal positions
//   no layer norm x = x + f(x); the stacks' final norms go too
//   no residual   x = f(norm(x)): each sublayer's output replaces its input
//   no FFN        attention sublayers only (with their residuals and norms)
//   no positions  --positional none: the model sees a bag of tokens plus the decoder's causality
// Reversal needs order (output i is input T-1-i); sort does not (its answer depends only on
// which characters occur), which is the contrast the positions row shows.
// Step through: nn::sublayer (the switches), then train::train_task.
#include "experiments/common/trained_run.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

struct Variant {
  std::string key, title;
  void (*apply)(train::TrainConfig&);
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v{
      {"intact", "intact block", [](train::TrainConfig&) {}},
      {"no_layer_norm", "no layer norm", [](train::TrainConfig& t) { t.layer_norm = false; }},
      {"no_residual", "no residual", [](train::TrainConfig& t) { t.residual = false; }},
      {"no_ffn", "no FFN", [](train::TrainConfig& t) { t.feedforward = false; }},
      {"no_positions", "no positions", [](train::TrainConfig& t) { t.positional = "none"; }},
  };
  return v;
}

train::TrainConfig task_config(const Config& cfg, const std::string& task, uint64_t seed) {
  train::TrainConfig t = transformer_config(cfg, seed);
  t.task = task;
  t.model = "transformer";
  t.norm_first = cfg.get_bool("norm_first");
  t.src_eos = true;
  t.positional = "sinusoidal";
  t.max_len = cfg.get_int("max_len");
  t.eval_min_len = cfg.get_int("eval_min_len");
  t.eval_max_len = cfg.get_int("max_len");
  t.steps = cfg.get_int("steps");
  t.batch_size = cfg.get_int("batch");
  t.lr = cfg.get_real("lr");
  t.warmup = cfg.get_int("warmup");
  t.eval_size = cfg.get_int("eval_size");
  t.eval_every = t.steps;  // equal steps: one evaluation at the end, no early stop
  t.target = 0;
  t.progress = "off";
  return t;
}

// Reversal, then --second_task unless it is "none".
std::vector<std::string> task_names(const Config& cfg) {
  std::vector<std::string> tasks{"reversal"};
  if (cfg.get_string("second_task") != "none") tasks.push_back(cfg.get_string("second_task"));
  return tasks;
}

struct Score {
  double exact = 0, token = 0, loss = 0;
  int64_t failed_runs = 0;  // runs the trainer stopped as diverged (scored 0 / no loss)
};

// One seed of one (task, variant); a run the trainer stops as diverged scores 0, no loss.
Score train_run(const Config& cfg, const std::string& task, const Variant& v, uint64_t seed) {
  train::TrainConfig t = task_config(cfg, task, seed);
  v.apply(t);
  try {
    // Named as results.json's keys (reversal_no_ffn): an error names this run, not the sweep.
    const TrainedRun r = train_in_scratch(t, fmt::format("{}_{}", task, v.key));
    const auto& e = r.summary.final_eval;
    return {e.at("exact_match"), e.at("token_accuracy"), e.at("loss")};
  } catch (const train::TrainingDiverged&) {
    return {.failed_runs = 1};
  }
}

// Mean over the runs of one (task, variant), one per seed (a diverged run adds 0).
Score mean_score(const Score* runs, size_t seeds) {
  Score s;
  for (size_t k = 0; k < seeds; ++k) {
    s.exact += runs[k].exact;
    s.token += runs[k].token;
    s.loss += runs[k].loss;
    s.failed_runs += runs[k].failed_runs;
  }
  const int64_t finished = static_cast<int64_t>(seeds) - s.failed_runs;
  s.exact /= static_cast<double>(seeds);
  s.token /= static_cast<double>(seeds);
  s.loss = finished ? s.loss / static_cast<double>(finished) : std::nan("");
  return s;
}

using Scores = std::map<std::string, std::map<std::string, Score>>;  // [task][variant]

// Every variant on every task: the table, results.json's scores and the per-variant keys.
Scores train_all(const Config& cfg, const std::vector<std::string>& tasks, RunContext& ctx) {
  Scores scores;
  Table t(
      fmt::format("{} steps, {} seeds each (means); {} layers per stack, d_model {}, {}",
                  cfg.get_int("steps"), cfg.get_int("seeds"), cfg.get_int("layers"),
                  cfg.get_int("d_model"), cfg.get_bool("norm_first") ? "pre-norm" : "post-norm"),
      {"task", "variant", "exact match", "token accuracy", "held-out loss", "diverged runs"});
  nlohmann::ordered_json js = nlohmann::ordered_json::array();
  const auto ns = static_cast<size_t>(cfg.get_int("seeds")), nv = variants().size();
  // Run i is seed i % ns of variant i / ns % nv on task i / (nv ns). The runs train side by
  // side: each draws from its own seeded generators (train_task builds them from its config).
  const std::vector<Score> runs = kit::side_by_side(tasks.size() * nv * ns, [&](size_t i) {
    return train_run(cfg, tasks[i / (nv * ns)], variants()[i / ns % nv], ctx.seed() + i % ns);
  });
  const Score* next = runs.data();
  for (const auto& task : tasks) {
    ctx.section(fmt::format("Training on {}", task));
    for (const auto& v : variants()) {
      const Score s = mean_score(next, ns);
      next += ns;
      scores[task][v.key] = s;
      t.add_row({task, v.title, fixed(s.exact, 3), fixed(s.token, 3),
                 std::isnan(s.loss) ? "-" : fixed(s.loss, 4), std::to_string(s.failed_runs)});
      js.push_back({{"task", task},
                    {"variant", v.key},
                    {"exact_match", s.exact},
                    {"token_accuracy", s.token},
                    {"loss", finite_or_null(s.loss)},
                    {"diverged_runs", s.failed_runs}});
      ctx.result(fmt::format("{}_{}_exact_match", task, v.key), s.exact);
      ctx.result(fmt::format("{}_{}_token_accuracy", task, v.key), s.token);
    }
  }
  ctx.section("Results");
  ctx.table(t);
  ctx.result("scores", js);
  return scores;
}

// What each part is for, per the document, against the measured drops.
void compare_with_document(const Config& cfg,
                           const std::vector<std::string>& tasks,
                           const Scores& scores,
                           RunContext& ctx) {
  const double margin = cfg.get_real("margin");
  DocumentComparison cmp(fmt::format(
      "002 §39.8 vs ours ('hurts' = token accuracy at least {:.2f} below the intact block's)",
      margin));
  auto token = [&](const std::string& task, const std::string& key) {
    return scores.at(task).at(key).token;
  };
  auto drop = [&](const std::string& task, const std::string& key) {
    return token(task, "intact") - token(task, key);
  };
  auto describe = [&](const std::string& key) {
    std::string s;
    for (const auto& task : tasks)
      s += fmt::format("{}{}: intact {:.3f}, {:.3f} without", s.empty() ? "" : "; ", task,
                       token(task, "intact"), token(task, key));
    return s;
  };
  auto hurts_all = [&](const std::string& key) {
    return std::all_of(tasks.begin(), tasks.end(),
                       [&](const std::string& task) { return drop(task, key) >= margin; });
  };
  cmp.add_exact("without positions the model cannot use order: reversal fails", "yes",
                kit::yes_no(drop("reversal", "no_positions") >= margin),
                fmt::format("reversal token accuracy: intact {:.3f}, no positions {:.3f}",
                            token("reversal", "intact"), token("reversal", "no_positions")));
  if (scores.count("sort") > 0) {
    // The document ties positions to order; sort's answer is order-free.
    cmp.add_exact("a task whose answer ignores input order needs no positions (sort)", "yes",
                  kit::yes_no(drop("sort", "no_positions") < margin),
                  fmt::format("sort token accuracy: intact {:.3f}, no positions {:.3f}",
                              token("sort", "intact"), token("sort", "no_positions")));
  }
  cmp.add_exact("removing the residual connections makes training fail", "yes",
                kit::yes_no(hurts_all("no_residual")), describe("no_residual"));
  cmp.add_exact("removing layer norm makes training fail", "yes",
                kit::yes_no(hurts_all("no_layer_norm")), describe("no_layer_norm"));
  cmp.add_exact("without the FFN, stacked attention loses expressive power", "yes",
                kit::yes_no(hurts_all("no_ffn")), describe("no_ffn"));
  // Every row reads a drop from the intact block. When the intact block itself diverged, the
  // settings (a learning rate too high, say) broke training for every variant, and a variant
  // scoring 0 says nothing about the part it lacks.
  for (const auto& task : tasks)
    if (const Score& intact = scores.at(task).at("intact"); intact.failed_runs > 0)
      cmp.not_judged(fmt::format("the intact block diverged on {} ({} of {} runs)", task,
                                 intact.failed_runs, cfg.get_int("seeds")));
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  const std::vector<std::string> tasks = task_names(cfg);
  const Scores scores = train_all(cfg, tasks, ctx);
  BarChart b;
  for (const auto& v : variants()) b.labels.push_back(v.title);
  for (const auto& task : tasks) {
    BarSeries s{task, {}, ""};
    for (const auto& v : variants()) s.values.push_back(scores.at(task).at(v.key).token);
    b.series.push_back(s);
  }
  b.title = fmt::format("Held-out token accuracy after {} steps, one part removed at a time",
                        cfg.get_int("steps"));
  b.y_label = "token accuracy";
  b.y_max = 1.0;
  ctx.figure("ablate_block", bar_chart_svg(b),
             "Same steps, seeds and data for every bar; only the named part is missing.");
  compare_with_document(cfg, tasks, scores, ctx);
}

}  // namespace

Experiment ablate_block() {
  Experiment e;
  e.name = "ablate-block";
  e.source = "002 §39.8";
  e.purpose =
      "Remove layer norm, residuals, the FFN or positions from the block: accuracy at equal "
      "steps on reversal and sort";
  // Measured: 124 s wall (40 s CPU) with the machine shared by other jobs (load ~11); --quick
  // 50 s wall (20 s CPU) there.
  e.config
      .add_string("second_task", "sort", "the task trained beside reversal",
                  {"sort", "copy", "none"})
      .add_int("d_model", 32, "model width", {.min = 1})
      .add_int("nhead", 4, "attention heads per layer (must divide d_model)", {.min = 1})
      .add_int("layers", 2, "encoder layers and decoder layers", {.min = 1})
      .add_int("dim_ff", 128, "feed-forward width", {.min = 1})
      .add_bool("norm_first", true, "pre-norm blocks (false: the 2017 post-norm)")
      .add_int("max_len", 10, "longest training (and held-out) sequence", {.min = 1})
      .add_int("eval_min_len", 6, "shortest held-out sequence", {.min = 1})
      .add_int("steps", 400, "training steps of every run", {.min = 1})
      .add_int("batch", 32, "sequences per step", {.min = 1})
      .add_real("lr", 3e-3, "peak AdamW learning rate (cosine schedule)", {.min = 0})
      .add_int("warmup", 40, "warm-up steps", {.min = 0})
      .add_int("eval_size", 200, "held-out sequences", {.min = 1})
      .add_int("seeds", 1, "seeds per variant (scores are means)", {.min = 1})
      .add_real("margin", 0.1, "a removal 'hurts' when token accuracy drops by at least this",
                {.min = 0})
      .add_int("seed", 1, "first seed (weights, data, held-out set)", {.min = 0});
  e.quick = {{"steps", "200"}, {"eval_size", "60"}};
  e.check = [](const Config& c) {
    require_divides(c, "nhead", "d_model");
    if (c.get_int("eval_min_len") > c.get_int("max_len"))
      throw UsageError("ablate-block: --eval_min_len must be <= --max_len");
    for (const auto& task : task_names(c)) train::validate_train_config(task_config(c, task, 0));
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
