// svf-finetune [004 §4.2, Transformer²]: singular value fine-tuning. A small encoder trained on
// task A is adapted to task B by learning only z, one scale per singular value of each weight
// matrix (W' = U diag(s ⊙ z) V^T, U and V frozen), beside full fine-tuning and LoRA at the
// parameter counts each trains; then Transformer²'s two passes: the first names the input's
// task, the second runs under that task's z-vector.
//
//   attnlab run svf-finetune                     # 3 seeds, ~1 min on 2 cores
//   attnlab run svf-finetune --task_b copy --lora_ranks 1,2,8
//
// Both tasks map a marked string of seq_len letters to a string of the same length
// (data/tasks/sequence.h): A reverses it (the base model's task), B sorts it by default. The
// marker before the string names the task. Per seed: the base model on A; then on B for the same
// steps full fine-tuning (every parameter), LoRA of each rank (B A per matrix) and SVF (z per
// matrix), each scored on B and on A (what it kept); an SVF classifier learns to name the task at
// the marker; and the mixed A+B set is run under z_A (= 1, the base), z_B, the best fixed mix
// a z_A + (1 - a) z_B (a chosen on a few-shot set) and the two passes. Step through:
// nn::SvfLinear::forward_with (the scaled singular values), svf::TaskModel::block.
#include "experiments/architectures/svf_finetune_report.h"
#include "experiments/architectures/svf_finetune_runs.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

const std::vector<std::string> kOps = {"reverse", "copy", "sort"};

void run(const Config& cfg, RunContext& ctx) {
  svf::Settings w;
  w.model = read_model(cfg);
  w.base = read_optimizer(cfg);
  w.finetune_steps = cfg.get_int("finetune_steps");
  w.classifier_steps = cfg.get_int("classifier_steps");
  w.finetune_lr = cfg.get_real("finetune_lr");
  w.lora_ranks = cfg.get_ints("lora_ranks");
  w.seq_len = cfg.get_int("seq_len");
  w.letters = cfg.get_int("letters");
  w.task_a = cfg.get_string("task_a");
  w.task_b = cfg.get_string("task_b");
  w.eval_size = read_eval(cfg).eval_size;
  w.few_shot = cfg.get_int("few_shot");
  w.seed = ctx.seed();
  // Independent seeds: each draws from its own generators (seeded from its index).
  const std::vector<svf::SeedOutcome> seeds =
      kit::side_by_side(static_cast<size_t>(cfg.get_int("seeds")),
                        [&](size_t s) { return svf::run_seed(w, ctx, static_cast<int64_t>(s)); });
  svf::report(w, seeds, ctx);
}

void check(const Config& c) {
  check_model(c);
  if (c.get_string("task_a") == c.get_string("task_b"))
    throw UsageError(
        fmt::format("svf-finetune: --task_a and --task_b are both {}", c.get_string("task_a")));
  const int64_t widest = std::min(c.get_int("d_model"), c.get_int("dim_ff"));
  for (int64_t r : c.get_ints("lora_ranks"))
    if (r < 1 || r > widest)
      throw UsageError(fmt::format(
          "svf-finetune: --lora_ranks {} is outside [1, {}] (min of d_model and dim_ff)", r,
          widest));
}

}  // namespace

Experiment svf_finetune() {
  Experiment e;
  e.name = "svf-finetune";
  e.source = "004 §4.2";
  e.purpose = "Transformer²: z-vectors scale singular values; two passes pick the z";
  e.config.add_int("seeds", 3, "seeds (their spread judges the comparisons)",
                   {.min = 1, .max = 20});
  e.config.add_string("task_a", "reverse", "the base model's task", kOps);
  e.config.add_string("task_b", "sort", "the new task the methods fine-tune for", kOps);
  e.config.add_int("seq_len", 8, "letters per string (the marker adds one position)",
                   {.min = 2, .max = 32});
  e.config.add_int("letters", 8, "alphabet size", {.min = 2, .max = 26});
  e.config.add_int("finetune_steps", 600, "steps of every fine-tuning on task B", {.min = 1});
  e.config.add_real("finetune_lr", 1e-2, "Adam learning rate of every fine-tuning",
                    {.min = 0, .min_exclusive = true});
  e.config.add_int("classifier_steps", 100, "steps of the first pass's SVF task classifier",
                   {.min = 1});
  e.config.add_ints("lora_ranks", {1, 4}, "LoRA ranks compared with SVF");
  e.config.add_int("few_shot", 32, "strings (both tasks) that choose the fixed z mixture",
                   {.min = 2, .max = 10000});
  add_model_fields(e.config, {.d_model = 32, .nhead = 2, .num_layers = 2, .dim_ff = 64});
  add_optimizer_fields(e.config, {.steps = 1000, .batch_size = 64, .lr = 3e-3});
  add_eval_fields(e.config, {.eval_size = 500});
  e.quick = {{"steps", "60"}, {"finetune_steps", "30"}, {"classifier_steps", "20"},
             {"seeds", "2"},  {"eval_size", "100"},     {"few_shot", "16"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
