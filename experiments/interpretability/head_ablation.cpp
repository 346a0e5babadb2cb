// head-ablation [000 §IV and "GPT's pyramid structure", 001 multi-head]: which heads of a trained
// reversal Transformer matter? Remove each head in turn, then every head of one attention layer
// at once, and measure held-out exact match; then train the same width with 1, 2, 4 and 8 heads
// for the same number of steps.
//
//   attnlab run head-ablation                   # ~3 min on 2 cores
//   attnlab run head-ablation --sweep_heads 1,8 --sweep_steps 600
//
// Removing a head: MultiheadAttention::set_head_mask multiplies head h's output by 0 before
// the output projection, so the head's values never reach the residual stream (the other
// heads are untouched, and nothing is retrained). Removing a layer's attention: every head of
// that sublayer at 0, so only the residual connection passes (the feed-forward part stays).
// The model is the reversal experiment's (d_model 64, 8 heads, 2+2 layers), trained until
// held-out exact match reaches --target.
// Step through: nn::MultiheadAttention::forward (the head mask), then exact_match.
#include "experiments/common/head_roles.h"
#include "experiments/common/trained_run.h"
#include "experiments/kit/kit.h"
#include "experiments/kit/spread.h"
#include "experiments/kit/trained_model_report.h"
#include "nn/transformer/seq2seq.h"

namespace attn::experiments {

namespace {

struct Ablations {
  double baseline = 0;
  // [kind][layer][head]: exact match with that head removed; [kind][layer]: the whole layer.
  std::map<AttentionKind, std::vector<std::vector<double>>> head;
  std::map<AttentionKind, std::vector<double>> layer;
};

Ablations ablate(TrainedRun& run, const std::vector<data::Example>& set) {
  auto& model = dynamic_cast<nn::Seq2SeqTransformer&>(run.summary.model->module());
  Ablations a;
  a.baseline = exact_match(*run.summary.model, set);
  for (AttentionKind kind : kAttentionKinds)
    for (nn::MultiheadAttention* m : attention_modules(model, kind)) {
      const int64_t heads = m->num_heads();
      std::vector<double> row;
      for (int64_t h = 0; h < heads; ++h) {
        Tensor mask = Tensor::ones({heads});
        mask[h] = 0;
        m->set_head_mask(mask);
        row.push_back(exact_match(*run.summary.model, set));
      }
      m->set_head_mask(Tensor::zeros({heads}));
      a.layer[kind].push_back(exact_match(*run.summary.model, set));
      m->set_head_mask(std::nullopt);
      a.head[kind].push_back(row);
    }
  return a;
}

void report_ablations(const Ablations& a, int64_t heads, RunContext& ctx) {
  std::vector<Heatmap> panels;
  std::vector<std::string> head_labels, layer_labels;
  for (int64_t h = 0; h < heads; ++h) head_labels.push_back(fmt::format("H{}", h + 1));
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::vector<std::string> header{"attention", "layer"};
  for (const auto& h : head_labels) header.push_back(h);
  Table ht("Change in exact match with one head removed", header);
  Table lt("Every head of one attention layer removed",
           {"attention", "layer", "exact match", "change"});
  for (const auto& [kind, layers] : a.head) {
    const auto n = static_cast<int64_t>(layers.size());
    Tensor delta = Tensor::zeros({n, heads});
    layer_labels.clear();
    for (int64_t l = 0; l < n; ++l) {
      layer_labels.push_back(fmt::format("L{}", l + 1));
      for (int64_t h = 0; h < heads; ++h) {
        const double em = layers[static_cast<size_t>(l)][static_cast<size_t>(h)];
        delta[l * heads + h] = static_cast<real>(em - a.baseline);
        rows.push_back({{"attention", kind_name(kind)},
                        {"layer", l + 1},
                        {"head", h + 1},
                        {"exact_match", em},
                        {"change", em - a.baseline}});
      }
      std::vector<std::string> cells{kind_title(kind), std::to_string(l + 1)};
      for (int64_t h = 0; h < heads; ++h) cells.push_back(fixed(delta[l * heads + h], 3));
      ht.add_row(cells);
      const double em = a.layer.at(kind)[static_cast<size_t>(l)];
      lt.add_row(
          {kind_title(kind), std::to_string(l + 1), fixed(em, 3), fixed(em - a.baseline, 3)});
      ctx.result(fmt::format("layer_removed_{}_{}", kind_name(kind), l + 1), em);
    }
    panels.push_back({.values = delta,
                      .row_labels = layer_labels,
                      .col_labels = head_labels,
                      .title = kind_title(kind),
                      .x_label = "head removed",
                      .y_label = "layer",
                      .colorbar_label = "change in exact match",
                      .annotate = true});
  }
  ctx.table(ht);
  ctx.table(lt);
  ctx.result("head_removed", rows);
  ctx.figure("head_ablation", heatmap_grid_svg(panels, 1, "Exact-match change, one head removed"),
             fmt::format("Each cell: exact match with that head's output zeroed, minus the intact "
                         "model's {:.3f}. Near 0: the head is not needed; strongly negative: the "
                         "model depends on it.",
                         a.baseline));
}

struct SweepPoint {
  int64_t heads = 0;
  double exact = 0, token = 0, loss = 0;
};

void report_sweep(const std::vector<SweepPoint>& pts,
                  int64_t steps,
                  int64_t d_model,
                  RunContext& ctx) {
  Table t(fmt::format("Head count at fixed width (d_model {}), {} steps each", d_model, steps),
          {"heads", "head dim", "exact match", "token accuracy", "held-out loss"});
  LinePlot p =
      kit::line_plot(fmt::format("Held-out accuracy after {} steps, d_model {}", steps, d_model),
                     "heads per layer", "fraction", kit::Axes::kLogX);
  const std::vector<double> heads = kit::column(pts, &SweepPoint::heads);
  p.series = {{"exact match", heads, kit::column(pts, &SweepPoint::exact), ""},
              {"token accuracy", heads, kit::column(pts, &SweepPoint::token), "", true}};
  nlohmann::ordered_json js = nlohmann::ordered_json::array();
  for (const auto& s : pts) {
    t.add_row({std::to_string(s.heads), std::to_string(d_model / s.heads), fixed(s.exact, 3),
               fixed(s.token, 3), fixed(s.loss, 4)});
    js.push_back({{"heads", s.heads},
                  {"exact_match", s.exact},
                  {"token_accuracy", s.token},
                  {"loss", s.loss}});
  }
  ctx.table(t);
  ctx.figure("head_count", line_plot_svg(p),
             "Same width, same steps, same data: only the split of d_model into heads changes");
  ctx.result("sweep", js);
}

// The spread of single-head effects, the worst single head and the best single-layer removal.
struct Spread {
  double worst = 0, mildest = -1e9;  // the change in exact match of the worst and mildest head
  std::string worst_name;
  int64_t harmless = 0, total = 0;  // heads whose removal costs less than --harmless
  double best_layer = -1;           // exact match after removing one layer's attention, at best
  std::string best_layer_name;
};

Spread spread_of(const Ablations& a, double harmless_below, RunContext& ctx) {
  Spread s;
  for (const auto& [kind, layers] : a.head)
    for (size_t l = 0; l < layers.size(); ++l)
      for (size_t h = 0; h < layers[l].size(); ++h) {
        const double d = layers[l][h] - a.baseline;
        ++s.total;
        s.harmless += d > -harmless_below;
        s.mildest = std::max(s.mildest, d);
        if (d < s.worst)
          s.worst = d, s.worst_name = fmt::format("{} L{} H{}", kind_title(kind), l + 1, h + 1);
      }
  for (const auto& [kind, ems] : a.layer)
    for (size_t l = 0; l < ems.size(); ++l)
      if (ems[l] > s.best_layer)
        s.best_layer = ems[l],
        s.best_layer_name = fmt::format("{} layer {}", kind_title(kind), l + 1);
  kit::record(ctx, {{"worst_single_head_change", s.worst},
                    {"worst_single_head", s.worst_name},
                    {"harmless_heads", s.harmless},
                    {"heads_total", s.total},
                    {"best_layer_removed_exact_match", s.best_layer}});
  return s;
}

// The sweep's run with d_model split into h heads: every run trains the same number of steps.
train::TrainConfig sweep_config(const Config& cfg, uint64_t seed, int64_t h) {
  train::TrainConfig t = reversal_train_config(cfg, seed);
  t.nhead = h;
  t.steps = cfg.get_int("sweep_steps");
  t.eval_every = t.steps;
  t.target = 0;
  t.progress = "off";
  return t;
}

// The sweep's points: runs[1 + i] trained head count i of --sweep_heads.
std::vector<SweepPoint> head_count_sweep(const Config& cfg,
                                         const std::vector<TrainedRun>& runs,
                                         RunContext& ctx) {
  ctx.section("Head count at fixed width");
  std::vector<SweepPoint> pts;
  const std::vector<int64_t> heads = cfg.get_ints("sweep_heads");
  for (size_t i = 0; i < heads.size(); ++i) {
    const auto& e = runs[1 + i].summary.final_eval;
    pts.push_back({heads[i], e.at("exact_match"), e.at("token_accuracy"), e.at("loss")});
  }
  report_sweep(pts, cfg.get_int("sweep_steps"), cfg.get_int("d_model"), ctx);
  return pts;
}

// 000's "pyramid": removing the top layer loses less than removing the bottom one. One row per
// attention kind, from the whole-layer removals: bottom = layer 1, top = the last layer. A gap
// inside two standard errors of the difference of two exact-match rates on n sequences cannot
// tell the two apart, and the row says so instead of calling it.
void pyramid_rows(const Ablations& a, double n, DocumentComparison& cmp) {
  for (const auto& [kind, ems] : a.layer) {
    if (ems.size() < 2) continue;
    const double bottom = ems.front(), top = ems.back();
    const double noise = 2 * kit::rate_difference_se(bottom, top, n);
    cmp.add_exact(fmt::format("{}: removing the top layer costs less than the bottom one (000, "
                              "GPT's pyramid)",
                              kind_title(kind)),
                  "yes", kit::yes_no(top > bottom),
                  fmt::format("exact match without layer 1's attention {:.3f}, without layer "
                              "{}'s {:.3f}: gap {:+.3f} against 2 standard errors {:.3f}",
                              bottom, ems.size(), top, top - bottom, noise))
        .not_judged_if(std::fabs(top - bottom) <= noise,
                       "the two removals differ by less than two standard errors");
  }
}

void compare_with_documents(const Config& cfg,
                            const Ablations& a,
                            const Spread& s,
                            const std::vector<SweepPoint>& pts,
                            RunContext& ctx) {
  const auto one =
      std::find_if(pts.begin(), pts.end(), [](const SweepPoint& p) { return p.heads == 1; });
  double best_multi = -1;
  int64_t best_multi_heads = 0;
  for (const auto& p : pts)
    if (p.heads > 1 && p.exact > best_multi) best_multi = p.exact, best_multi_heads = p.heads;
  DocumentComparison cmp(
      fmt::format("000 §IV, 001 vs ours ({} heads; harmless = removal costs "
                  "less than {:.2f} exact match)",
                  cfg.get_int("nhead"), cfg.get_real("harmless")));
  cmp.add_exact("heads do different jobs: removing one hurts far more than removing another", "yes",
                kit::yes_no(s.worst < -cfg.get_real("harmless") && s.harmless > 0),
                fmt::format("worst: {} ({:+.3f}); {} of {} heads change exact match by less than "
                            "{:.2f}",
                            s.worst_name.empty() ? "none" : s.worst_name, s.worst, s.harmless,
                            s.total, cfg.get_real("harmless")));
  cmp.add_exact("the model still works with one layer's attention pruned (000, GPT's pyramid)",
                "yes", kit::yes_no(s.best_layer >= 0.5 * a.baseline),
                fmt::format("best after removing one layer's attention: {} at {:.3f} (intact "
                            "{:.3f}; 'works' = at least half)",
                            s.best_layer_name, s.best_layer, a.baseline));
  pyramid_rows(a, static_cast<double>(cfg.get_int("ablation_examples")), cmp);
  if (one != pts.end() && best_multi >= 0) {
    // Two standard errors of the difference of two exact-match rates on n held-out sequences:
    // a smaller gap is what two equally good models show by chance.
    const auto n = static_cast<double>(cfg.get_int("eval_size"));
    const double noise = 2 * kit::rate_difference_se(one->exact, best_multi, n);
    ctx.result("sweep_noise", noise);
    cmp.add_exact(
        "several heads beat one head of the full width (000 §IV: one head, one "
        "pattern)",
        "yes", kit::yes_no(best_multi - one->exact > noise),
        fmt::format("1 head {:.3f}; best multi-head ({} heads) {:.3f} after {} steps: "
                    "a gap of {:+.3f} against 2 standard errors {:.3f}",
                    one->exact, best_multi_heads, best_multi, cfg.get_int("sweep_steps"),
                    best_multi - one->exact, noise));
  }
  ctx.compare(cmp);
}

void run(const Config& cfg, RunContext& ctx) {
  // The model to ablate and the sweep's models train side by side: each has its own seeded
  // generators (train_task builds them from its config), so none depends on another.
  std::vector<train::TrainConfig> tcs{reversal_train_config(cfg, ctx.seed())};
  std::vector<std::string> names{"train"};
  for (int64_t h : cfg.get_ints("sweep_heads")) {
    tcs.push_back(sweep_config(cfg, ctx.seed(), h));
    names.push_back(fmt::format("sweep-{}-heads", h));
  }
  std::vector<TrainedRun> runs = train_side_by_side(tcs, ctx, names);
  ctx.section("Training the reversal model (train/run)");
  TrainedRun& run = runs[0];
  ctx.preformatted(
      kit::stop_line(run.summary) +
      fmt::format("; held-out exact match {:.4f}", run.summary.final_eval.at("exact_match")));
  ctx.result("train_steps", run.summary.result.last_step);
  ctx.result("train_seconds", run.summary.result.wall_seconds);

  const auto set = kit::first_examples(run.setup.heldout_set, cfg.get_int("ablation_examples"));
  ctx.section(fmt::format("Removing heads, scored on {} held-out sequences", set.size()));
  const Ablations a = ablate(run, set);
  ctx.note(fmt::format("Intact model: exact match {:.3f} on these sequences.", a.baseline));
  ctx.result("baseline_exact_match", a.baseline);
  // Every mask was cleared: the intact model must score exactly as before.
  ctx.result("exact_match_after_ablations", exact_match(*run.summary.model, set));
  report_ablations(a, cfg.get_int("nhead"), ctx);
  const Spread s = spread_of(a, cfg.get_real("harmless"), ctx);
  const std::vector<SweepPoint> pts = head_count_sweep(cfg, runs, ctx);
  compare_with_documents(cfg, a, s, pts, ctx);
}

}  // namespace

Experiment head_ablation() {
  Experiment e;
  e.name = "head-ablation";
  e.source = "000 §IV, 001 (multi-head attention)";
  e.purpose = "Remove each head / layer of a trained reversal model; head count at fixed width";
  add_reversal_fields(e.config)
      .add_int("ablation_examples", 200, "held-out sequences each ablation is scored on",
               {.min = 1})
      .add_real("harmless", 0.02,
                "a head whose removal costs less exact match than this is "
                "counted as harmless",
                {.min = 0})
      .add_ints("sweep_heads", {1, 2, 4, 8}, "head counts of the sweep (each divides d_model)",
                {.min = 1})
      .add_int("sweep_steps", 300, "training steps of every sweep run", {.min = 1})
      .add_int("seed", 1, "random seed (weights, data, held-out set)", {.min = 0});
  // A narrower model trained briefly (exact match about 0.5-0.7): enough for removals to show.
  e.quick = {{"d_model", "32"},      {"nhead", "4"},
             {"dim_ff", "128"},      {"steps", "300"},
             {"warmup", "30"},       {"eval_size", "60"},
             {"eval_every", "300"},  {"ablation_examples", "60"},
             {"sweep_heads", "1,4"}, {"sweep_steps", "60"}};
  e.check = [](const Config& c) {
    require_divides(c, "nhead", "d_model");
    for (int64_t h : c.get_ints("sweep_heads"))
      if (c.get_int("d_model") % h != 0)
        throw UsageError(fmt::format("head-ablation: --sweep_heads {} must divide --d_model {}", h,
                                     c.get_int("d_model")));
    train::TrainConfig t = reversal_train_config(c, 0);
    train::validate_train_config(t);
    t.steps = c.get_int("sweep_steps");
    train::validate_train_config(t);
  };
  e.run = run;
  return e;
}

}  // namespace attn::experiments
