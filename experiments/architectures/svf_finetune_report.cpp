// svf-finetune's report (svf_finetune_report.h).
#include "experiments/architectures/svf_finetune_report.h"

#include "experiments/kit/kit.h"
#include "experiments/kit/spread.h"

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

std::string with_sd(const std::vector<double>& xs) {
  const Spread s = kit::spread_of(xs);
  return fmt::format("{} ± {}", fixed(s.mean), fixed(s.sd));
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
  t.add_row({"base model (no fine-tuning)", "0", with_sd(kit::column(seeds, &SeedOutcome::base_b)),
             with_sd(kit::column(seeds, &SeedOutcome::base_a))});
  for (size_t m = 0; m < first.methods.size(); ++m) {
    const std::string key = key_of(first.methods[m].name);
    const auto acc = method_column(seeds, m, &MethodOutcome::accuracy_b);
    const auto kept = method_column(seeds, m, &MethodOutcome::retention_a);
    ctx.result(key + "_trainable", first.methods[m].trainable);
    ctx.result(key + "_accuracy_b", acc);
    ctx.result(key + "_retention_a", kept);
    t.add_row({first.methods[m].name, std::to_string(first.methods[m].trainable), with_sd(acc),
               with_sd(kept)});
  }
  ctx.table(t);

  Table mixed("The mixed set (half task A, half task B): token accuracy, mean ± sd",
              {"inference", "accuracy"});
  const std::vector<std::pair<std::string, double MixedOutcome::*>> rows = {
      {"only_a", &MixedOutcome::only_a},     {"only_b", &MixedOutcome::only_b},
      {"best_mix", &MixedOutcome::best_mix}, {"two_pass", &MixedOutcome::two_pass},
      {"oracle", &MixedOutcome::oracle},     {"first_pass", &MixedOutcome::first_pass},
      {"alpha", &MixedOutcome::alpha}};
  const std::vector<std::string> labels = {
      "every input under z_A (the base model)",
      "every input under z_B",
      "every input under the few-shot mix a z_A + (1 - a) z_B",
      "two passes: the first names the task, the second runs its z",
      "the true task's z (the ceiling of two passes)",
      "first pass: share of inputs whose task it names",
      "the few-shot mix's a"};
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto col = mixed_column(seeds, rows[i].second);
    ctx.result("mixed_" + rows[i].first, col);
    mixed.add_row({labels[i], with_sd(col)});
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

}  // namespace

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

}  // namespace attn::experiments::svf
