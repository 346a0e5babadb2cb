// titans-memory [004 §4.2 "Titans"]: a neural long-term memory written at test time by its own
// surprise (the gradient of an associative loss, with momentum and a forgetting gate), placed
// three ways beside attention — as context (MAC), as a gate (MAG), as a layer (MAL) — with a
// linear and a deep (two-layer MLP) memory, on associative recall with more pairs than the
// attention's window (or MAC's segment) holds, so the older pairs reach the query only through
// the memory.
//
//   attnlab run titans-memory                   # 7 models x 2 seeds
//   attnlab run titans-memory --pairs 6 --segment 6 --steps 1500 --seeds 3
//
// Rows (document 004 §4.2's claims, each "yes" in the document):
//   - deep (MLP) memory beats a linear one: mean over placements of deep - linear recall, per
//     seed, against the seeds' spread (2 standard errors);
//   - every placement recalls more than sliding-window attention alone (the memory carries the
//     pairs the window cannot see);
//   - the surprise rule: the size of each write tracks the associative loss it corrects;
//   - the forgetting gate as learned beats forgetting nearly everything (alpha -> 1 at test).
#include "experiments/efficient/titans_memory.h"
#include "experiments/kit/classifier_steps.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/spread.h"

namespace attn::experiments {

namespace {

struct Measured {
  std::vector<TitansVariant> variants;
  std::vector<std::vector<double>> accuracy;     // [variant][seed]
  std::vector<double> surprise_r;                // [variant], mean over seeds (0 for no memory)
  std::vector<double> forget_all, never_forget;  // [variant], recall at alpha -> 1 and -> 0
  int64_t writes = 0;
};

int index_of(const std::vector<TitansVariant>& vs, const std::string& name) {
  for (size_t i = 0; i < vs.size(); ++i)
    if (vs[i].name == name) return static_cast<int>(i);
  throw Error("titans-memory: no variant " + name);
}

// One trained model's measurements (the probes only where it has a memory).
struct SeedRun {
  double accuracy = 0, surprise_r = 0, forget_all = 0, never_forget = 0;
  int64_t writes = 0;
  bool memory = false;
};

Measured measure(const Config& cfg, RunContext& ctx) {
  Measured r;
  r.variants = titans_variants();
  const int64_t seeds = cfg.get_int("seeds"), n = cfg.get_int("eval_size");
  const data::RecallTask task = titans_task(cfg);
  const size_t nv = r.variants.size(), ns = static_cast<size_t>(seeds);
  // Run j is variant j / ns at seed j % ns: independent (each draws from generators of its own
  // seed), so they train side by side.
  const std::vector<SeedRun> runs = kit::side_by_side(nv * ns, [&](size_t j) {
    const uint64_t seed = ctx.seed() + static_cast<uint64_t>(j % ns);
    TrainedTitans t = train_titans(r.variants[j / ns], cfg, ctx, seed);
    SeedRun o{.accuracy = t.accuracy, .memory = !t.memories.empty()};
    if (!o.memory) return o;
    const SurpriseProbe p = probe_surprise(t, task, n, seed * 7 + 3);
    o.surprise_r = p.correlation;
    o.writes = p.writes;
    o.forget_all = recall_with_forgetting(t, task, n, seed * 7 + 2, 0.999);
    o.never_forget = recall_with_forgetting(t, task, n, seed * 7 + 2, 0.001);
    return o;
  });
  r.accuracy.assign(nv, {});
  r.surprise_r.assign(nv, 0);
  r.forget_all.assign(nv, 0);
  r.never_forget.assign(nv, 0);
  const double k = 1.0 / static_cast<double>(seeds);
  for (size_t j = 0; j < runs.size(); ++j) {
    const size_t v = j / ns;
    r.accuracy[v].push_back(runs[j].accuracy);
    if (!runs[j].memory) continue;
    r.surprise_r[v] += runs[j].surprise_r / static_cast<double>(seeds);
    r.writes = runs[j].writes;
    r.forget_all[v] += k * runs[j].forget_all;
    r.never_forget[v] += k * runs[j].never_forget;
  }
  return r;
}

// Per seed: mean over `plus` of accuracy minus mean over `minus`.
std::vector<double> seed_differences(const Measured& r,
                                     const std::vector<std::string>& plus,
                                     const std::vector<std::string>& minus) {
  std::vector<double> d(r.accuracy.front().size(), 0);
  for (size_t s = 0; s < d.size(); ++s) {
    for (const std::string& p : plus)
      d[s] += r.accuracy[static_cast<size_t>(index_of(r.variants, p))][s] /
              static_cast<double>(plus.size());
    for (const std::string& m : minus)
      d[s] -= r.accuracy[static_cast<size_t>(index_of(r.variants, m))][s] /
              static_cast<double>(minus.size());
  }
  return d;
}

// "yes" when the mean difference over seeds exceeds two standard errors of that mean, "no"
// when it is below minus two; in between the seeds cannot tell (not judged, more --seeds).
Comparison& add_beats(DocumentComparison& cmp,
                      const std::string& name,
                      const std::vector<double>& diffs,
                      const std::string& what) {
  const kit::Spread s = kit::spread_of(diffs);
  const double se = s.sd / std::sqrt(static_cast<double>(diffs.size()));
  const bool beats = s.mean > 2 * se && s.mean > 0, loses = s.mean < -2 * se && s.mean < 0;
  const std::string measured =
      fmt::format("{} = {:+.3f}, 2 se over {} seeds {:.3f}", what, s.mean, diffs.size(), 2 * se);
  return cmp
      .add_exact(name, "yes", kit::yes_no(beats),
                 loses ? "measured: " + measured + " (the other is better)" : measured)
      .not_judged_if(diffs.size() < 2, "one seed has no spread (--seeds >= 2)")
      .not_judged_if(!beats && !loses,
                     fmt::format("the gap is within 2 se of 0 ({}; more --seeds)", measured));
}

void report(const Config& cfg, RunContext& ctx, const Measured& r) {
  Table t("Held-out recall (mean over seeds), the surprise probe and the forgetting gate",
          {"variant", "recall", "sd", "r(write size, loss)", "alpha->1", "alpha->0"});
  BarChart chart;
  chart.title = "Recall of " + std::to_string(cfg.get_int("pairs")) + " pairs";
  chart.y_label = "held-out recall";
  chart.y_max = 1;
  chart.series.push_back({"mean over seeds", {}, ""});
  for (size_t v = 0; v < r.variants.size(); ++v) {
    const kit::Spread s = kit::spread_of(r.accuracy[v]);
    const bool memory = r.variants[v].depth > 0;
    t.add_row({r.variants[v].name, fixed(s.mean, 3), fixed(s.sd, 3),
               memory ? fixed(r.surprise_r[v], 3) : "-", memory ? fixed(r.forget_all[v], 3) : "-",
               memory ? fixed(r.never_forget[v], 3) : "-"});
    ctx.result("recall_" + r.variants[v].name, s.mean);
    ctx.result("recall_sd_" + r.variants[v].name, s.sd);
    if (memory) {
      ctx.result("surprise_r_" + r.variants[v].name, r.surprise_r[v]);
      ctx.result("recall_forget_all_" + r.variants[v].name, r.forget_all[v]);
      ctx.result("recall_never_forget_" + r.variants[v].name, r.never_forget[v]);
    }
    chart.labels.push_back(r.variants[v].name);
    chart.series[0].values.push_back(s.mean);
  }
  ctx.table(t);
  ctx.figure("recall", bar_chart_svg(chart),
             "Held-out recall per variant: the window alone, then MAC, MAG, MAL with a linear "
             "and a deep memory");
}

void compare(const Config& cfg, RunContext& ctx, const Measured& r) {
  const int64_t n = cfg.get_int("eval_size");
  // A model that learned nothing recalls at chance, 1/10 values, plus 3 standard errors.
  const double chance_plus = 0.1 + 3 * 0.5 / std::sqrt(static_cast<double>(n));
  double best = 0;
  for (const auto& acc : r.accuracy) best = std::max(best, kit::mean_of(acc));
  DocumentComparison cmp("004 §4.2 Titans vs ours");
  add_beats(cmp, "Titans: a deep (MLP) memory beats a linear one (recall, MAC/MAG/MAL)",
            seed_differences(r, {"mac-deep", "mag-deep", "mal-deep"},
                             {"mac-linear", "mag-linear", "mal-linear"}),
            "deep - linear recall")
      .needs_training(best, chance_plus, "best recall");
  const std::vector<std::pair<std::string, std::string>> placements = {
      {"mac", "context"}, {"mag", "gate"}, {"mal", "layer"}};
  for (const auto& [p, word] : placements)
    add_beats(cmp, fmt::format("Titans, memory as a {}: recalls more than the window alone", word),
              seed_differences(r, {p + "-linear", p + "-deep"}, {"window-only"}),
              p + " - window-only recall")
        .needs_training(best, chance_plus, "best recall");
  double r_mean = 0, forget_gain = 0;
  int memories = 0;
  for (size_t v = 0; v < r.variants.size(); ++v)
    if (r.variants[v].depth > 0) {
      r_mean += r.surprise_r[v];
      forget_gain += kit::mean_of(r.accuracy[v]) - r.forget_all[v];
      ++memories;
    }
  r_mean /= memories;
  forget_gain /= memories;
  // A correlation of unrelated quantities over N writes is within about 3 / sqrt(N) of 0.
  const double r_noise = 3 / std::sqrt(static_cast<double>(std::max<int64_t>(r.writes, 1)));
  cmp.add_exact("Titans: surprise rule, a write's size tracks the associative loss it corrects",
                "yes", kit::yes_no(r_mean > r_noise),
                fmt::format("mean Pearson r over the memory models {:.3f} (noise {:.3f})", r_mean,
                            r_noise))
      .needs_training(best, chance_plus, "best recall");
  cmp.add_exact("Titans: forgetting gate, the learned gate beats forgetting all (alpha -> 1)",
                "yes", kit::yes_no(forget_gain > chance_plus - 0.1),
                fmt::format("recall learned - alpha->1 = {:+.3f} (mean over memory models; noise "
                            "{:.3f})",
                            forget_gain, chance_plus - 0.1))
      .needs_training(best, chance_plus, "best recall");
  ctx.result("surprise_r_mean", r_mean);
  ctx.result("forget_all_cost", forget_gain);
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  const data::RecallTask task = titans_task(cfg);
  ctx.note(fmt::format(
      "Associative recall of {} pairs (T = {}): attention sees a window of {} + 1 rows (MAG, MAL) "
      "or a segment of {} rows (MAC); the memory is written after each segment of {}. {} models "
      "x {} seeds, {} steps each.",
      cfg.get_int("pairs"), task.max_src_len(), cfg.get_int("window"), cfg.get_int("segment"),
      cfg.get_int("segment"), titans_variants().size(), cfg.get_int("seeds"),
      cfg.get_int("steps")));
  const Measured r = measure(cfg, ctx);
  report(cfg, ctx, r);
  compare(cfg, ctx, r);
}

void check(const Config& cfg) {
  require_divides(cfg, "nhead", "d_model");
  const int64_t t = 2 * cfg.get_int("pairs") + 2;
  if (cfg.get_int("segment") >= t || cfg.get_int("window") + 1 >= t)
    throw UsageError(fmt::format(
        "titans-memory: --segment {} and --window {} + 1 must be below the input length {} (2 "
        "pairs + 2), or attention sees every pair and the memory has nothing to carry",
        cfg.get_int("segment"), cfg.get_int("window"), t));
}

}  // namespace

Experiment titans_memory() {
  Experiment e;
  e.name = "titans-memory";
  e.source = "004 §4.2";
  e.purpose = "Titans: memory as context, gate and layer; deep vs linear memory; surprise rule";
  e.config.add_int("pairs", 4, "recall key-value pairs (T = 2 pairs + 2)", {.min = 2, .max = 12})
      .add_int("segment", 4, "rows per memory segment (MAC attends inside one)", {.min = 1})
      .add_int("window", 2, "MAG/MAL sliding window: row i sees rows i-window..i", {.min = 0})
      .add_int("memory_hidden", 0, "deep memory's hidden units (0 = d_model)", {.min = 0})
      .add_int("seeds", 2, "trained models per variant (their spread judges the rows)",
               {.min = 1, .max = 10});
  add_model_fields(e.config, {.d_model = 32, .nhead = 2, .num_layers = 2});
  add_optimizer_fields(e.config, {.steps = 500, .batch_size = 32, .lr = 3e-3, .clip = 1});
  add_eval_fields(e.config, {.eval_size = 500});
  e.quick = {{"steps", "30"}, {"seeds", "2"}, {"eval_size", "100"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
