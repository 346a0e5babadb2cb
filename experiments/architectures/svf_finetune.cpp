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
#include <tuple>

#include "experiments/architectures/svf_finetune_runs.h"
#include "experiments/kit/kit.h"

namespace attn::experiments::svf {

namespace {

using kit::Spread;

std::vector<double> method_column(const std::vector<SeedOutcome>& seeds,
                                  size_t method,
                                  double MethodOutcome::*field) {
  std::vector<double> out;
  for (const SeedOutcome& s : seeds) out.push_back(s.methods[method].*field);
  return out;
}

template <class Field>
std::vector<double> mixed_column(const std::vector<SeedOutcome>& seeds, Field field) {
  std::vector<double> out;
  for (const SeedOutcome& s : seeds) out.push_back(s.mixed.*field);
  return out;
}

// "LoRA r=4" -> "lora_r4", "SVF" -> "svf": the results.json prefix of a method.
std::string key_of(const std::string& name) {
  std::string k;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)))
      k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (c == ' ')
      k += '_';
  return k;
}

// Is a above b, judged over seeds? The per-seed differences' mean against a noise of two of
// their standard deviations, and never below two standard errors of the difference of two rates
// measured on n strings (a few seeds can underestimate the spread).
struct Verdict {
  std::string word;  // "yes", "no" (b above a), "within noise"
  double mean = 0, noise = 0;
};

Verdict above(const std::vector<double>& a, const std::vector<double>& b, double n) {
  std::vector<double> d;
  for (size_t i = 0; i < a.size(); ++i) d.push_back(a[i] - b[i]);
  const Spread s = kit::spread_of(d);
  const double noise =
      std::max(2 * s.sd, 2 * kit::rate_difference_se(kit::mean_of(a), kit::mean_of(b), n));
  return {s.mean > noise ? "yes" : s.mean < -noise ? "no" : "within noise", s.mean, noise};
}

std::string measured(const Verdict& v) {
  return fmt::format("difference {:+.3f}, noise {:.3f}", v.mean, v.noise);
}

void results_and_table(const Settings& w, const std::vector<SeedOutcome>& seeds, RunContext& ctx) {
  const SeedOutcome& first = seeds.front();
  ctx.result("base_accuracy_a", kit::column(seeds, &SeedOutcome::base_a));
  ctx.result("base_accuracy_b", kit::column(seeds, &SeedOutcome::base_b));
  ctx.result("svf_expected_trainable", first.svf_expected);
  Table t(fmt::format("Task B ({}) from a model trained on task A ({}): token accuracy, mean ± sd "
                      "over {} seeds",
                      w.task_b, w.task_a, seeds.size()),
          {"method", "trainable parameters", "task B accuracy", "task A kept"});
  t.add_row({"base model (no fine-tuning)", "0",
             kit::spread_text(kit::column(seeds, &SeedOutcome::base_b)),
             kit::spread_text(kit::column(seeds, &SeedOutcome::base_a))});
  for (size_t m = 0; m < first.methods.size(); ++m) {
    const std::string key = key_of(first.methods[m].name);
    const auto acc = method_column(seeds, m, &MethodOutcome::accuracy_b);
    const auto kept = method_column(seeds, m, &MethodOutcome::retention_a);
    ctx.result(key + "_trainable", first.methods[m].trainable);
    ctx.result(key + "_accuracy_b", acc);
    ctx.result(key + "_retention_a", kept);
    t.add_row({first.methods[m].name, std::to_string(first.methods[m].trainable),
               kit::spread_text(acc), kit::spread_text(kept)});
  }
  ctx.table(t);

  Table mixed("The mixed set (half task A, half task B): token accuracy, mean ± sd",
              {"inference", "accuracy"});
  using Row = std::tuple<std::string, double MixedOutcome::*, std::string>;  // key, field, label
  for (const auto& [key, field, label] : std::vector<Row>{
           {"only_a", &MixedOutcome::only_a, "every input under z_A (the base model)"},
           {"only_b", &MixedOutcome::only_b, "every input under z_B"},
           {"best_mix", &MixedOutcome::best_mix,
            "every input under the few-shot mix a z_A + (1 - a) z_B"},
           {"two_pass", &MixedOutcome::two_pass,
            "two passes: the first names the task, the second runs its z"},
           {"oracle", &MixedOutcome::oracle, "the true task's z (the ceiling of two passes)"},
           {"first_pass", &MixedOutcome::first_pass,
            "first pass: share of inputs whose task it names"},
           {"alpha", &MixedOutcome::alpha, "the few-shot mix's a"}}) {
    const auto col = mixed_column(seeds, field);
    ctx.result("mixed_" + key, col);
    mixed.add_row({label, kit::spread_text(col)});
  }
  ctx.table(mixed);
}

void figure(const std::vector<SeedOutcome>& seeds, RunContext& ctx) {
  BarChart methods;
  methods.title = "Fine-tuning on task B (trainable parameters in brackets)";
  methods.y_label = "token accuracy";
  methods.y_max = 1;
  std::vector<double> acc{kit::mean_of(kit::column(seeds, &SeedOutcome::base_b))},
      kept{kit::mean_of(kit::column(seeds, &SeedOutcome::base_a))};
  methods.labels = {"base (0)"};
  for (size_t m = 0; m < seeds.front().methods.size(); ++m) {
    const MethodOutcome& o = seeds.front().methods[m];
    methods.labels.push_back(fmt::format("{} ({})", o.name, o.trainable));
    acc.push_back(kit::mean_of(method_column(seeds, m, &MethodOutcome::accuracy_b)));
    kept.push_back(kit::mean_of(method_column(seeds, m, &MethodOutcome::retention_a)));
  }
  methods.series = {{"task B (new)", acc, ""}, {"task A (kept)", kept, ""}};
  BarChart mixed;
  mixed.title = "The mixed A+B set";
  mixed.y_label = "token accuracy";
  mixed.y_max = 1;
  mixed.labels = {"z_A", "z_B", "fixed mix", "two passes", "true task"};
  std::vector<double> m;
  for (auto f : {&MixedOutcome::only_a, &MixedOutcome::only_b, &MixedOutcome::best_mix,
                 &MixedOutcome::two_pass, &MixedOutcome::oracle})
    m.push_back(kit::mean_of(mixed_column(seeds, f)));
  mixed.series = {{"mean over seeds", m, ""}};
  ctx.figure("svf_finetune", bar_panels_svg({methods, mixed}, "Singular value fine-tuning"),
             "Each method's accuracy on the new task and what it kept of the old one; the "
             "mixed set under single z-vectors and under two passes");
}

// The results.json entries, the tables, the figure and the comparison with 004 §4.2, from every
// seed's outcome.
void report(const Settings& w, const std::vector<SeedOutcome>& seeds, RunContext& ctx) {
  results_and_table(w, seeds, ctx);
  figure(seeds, ctx);
  const SeedOutcome& first = seeds.front();
  const size_t svf = first.methods.size() - 1, full = 0;
  const MethodOutcome& s = first.methods[svf];
  int64_t smallest_lora = 0;
  for (size_t m = 1; m < svf; ++m)
    if (smallest_lora == 0 || first.methods[m].trainable < smallest_lora)
      smallest_lora = first.methods[m].trainable;
  const double n = static_cast<double>(w.eval_size);
  const auto svf_b = method_column(seeds, svf, &MethodOutcome::accuracy_b);
  const auto base_b = kit::column(seeds, &SeedOutcome::base_b);
  const Verdict learns = above(svf_b, base_b, n);
  const Verdict keeps = above(method_column(seeds, svf, &MethodOutcome::retention_a),
                              method_column(seeds, full, &MethodOutcome::retention_a), n);
  std::vector<double> best_single;
  for (const SeedOutcome& o : seeds)
    best_single.push_back(std::max(o.mixed.only_a, o.mixed.only_b));
  const Verdict two = above(mixed_column(seeds, &MixedOutcome::two_pass), best_single, n);
  // A base model that did not learn A (chance is 1 / letters), or an SVF that did not learn B,
  // leaves the rows about forgetting and mixing nothing to compare.
  const double base_a = kit::mean_of(kit::column(seeds, &SeedOutcome::base_a));
  const double chance = 1.0 / static_cast<double>(w.letters),
               learned = chance + 3 * 0.5 / std::sqrt(n);
  const double svf_gain = learns.mean - learns.noise;

  DocumentComparison cmp(
      fmt::format("004 §4.2: Transformer²'s singular value fine-tuning vs ours (mean of {} seeds)",
                  seeds.size()));
  cmp.add("SVF trains one z entry per singular value: sum of min(out, in) over the matrices",
          static_cast<double>(first.svf_expected), static_cast<double>(s.trainable), 0)
      .exact_quantity();
  cmp.add_exact("SVF trains fewer parameters than LoRA of the smallest rank", "yes",
                kit::yes_no(smallest_lora > 0 && s.trainable < smallest_lora),
                fmt::format("SVF {} vs LoRA {}", s.trainable, smallest_lora))
      .not_judged_if(smallest_lora == 0, "no LoRA rank given");
  cmp.add_exact("SVF learns the new task (task-B accuracy above the base model's)", "yes",
                learns.word, measured(learns))
      .needs_training(base_a, learned, "base model's task-A accuracy");
  cmp.add_exact("SVF forgets task A less than full fine-tuning", "yes", keeps.word,
                measured(keeps) +
                    "; one z_B serves every input, so task A runs under it too (z = 1 gives back "
                    "the base exactly: the two-pass row)")
      .needs_training(base_a, learned, "base model's task-A accuracy")
      .needs_training(svf_gain, 0, "SVF's task-B gain over the base, beyond noise");
  cmp.add_exact("two passes beat every single z-vector on the mixed A+B set", "yes", two.word,
                measured(two))
      .needs_training(base_a, learned, "base model's task-A accuracy")
      .needs_training(svf_gain, 0, "SVF's task-B gain over the base, beyond noise");
  ctx.compare(cmp);
}

}  // namespace

}  // namespace attn::experiments::svf

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
