#include "experiments/architectures/vit_patches_runs.h"

#include "experiments/common/vit_figures.h"
#include "experiments/kit/kit.h"

namespace attn::experiments::vit {

namespace {

ShapesVitSettings settings(const Config& cfg, uint64_t seed, int64_t patch, bool positions) {
  ShapesVitSettings s;
  s.model.image_size = cfg.get_int("image_size");
  s.model.patch_size = patch;
  s.model.d_model = cfg.get_int("d_model");
  s.model.nhead = cfg.get_int("nhead");
  s.model.num_layers = cfg.get_int("num_layers");
  s.model.dim_feedforward = cfg.get_int("dim_ff");
  s.model.num_classes = data::kNumShapeClasses;
  s.model.position_embedding = positions;
  s.data = {.image_size = cfg.get_int("image_size"),
            .min_radius = cfg.get_real("min_radius"),
            .max_radius = cfg.get_real("max_radius"),
            .noise = cfg.get_real("noise")};
  s.steps = cfg.get_int("steps");
  s.batch = cfg.get_int("batch_size");
  s.warmup = cfg.get_int("warmup");
  s.lr = cfg.get_real("lr");
  s.seed = seed;
  return s;
}

void report_training(const ShapesVitRun& run, RunContext& ctx) {
  CsvWriter log = ctx.csv("loss", {"step", "loss"});
  Series loss{"training loss (mean of 25 steps)", {}, {}, "", false, false};
  double window = 0;
  for (size_t i = 0; i < run.losses.size(); ++i) {
    log.row({static_cast<double>(i + 1), run.losses[i]});
    window += run.losses[i];
    if ((i + 1) % 25 == 0) {
      loss.x.push_back(static_cast<double>(i + 1));
      loss.y.push_back(window / 25);
      window = 0;
    }
  }
  LinePlot p = kit::line_plot("ViT on the shape images: training loss", "step", "cross-entropy");
  p.series = {loss};
  p.refs = {{RefLine::kHorizontal, std::log(static_cast<double>(data::kNumShapeClasses)),
             "chance: log 7"}};
  ctx.figure("loss", line_plot_svg(p), "Training loss; fresh images every step");
}

struct PatchPoint {
  int64_t patch = 0, tokens = 0;
  double accuracy = 0, ms_per_step = 0, first_layer = 0, last_layer = 0;
};

void report_patch_sweep(const std::vector<PatchPoint>& pts, RunContext& ctx) {
  Table t("Patch size: same model, same steps",
          {"patch", "tokens (1 + N)", "accuracy", "ms / step", "layer 1 distance / uniform",
           "last layer distance / uniform"});
  nlohmann::ordered_json js = nlohmann::ordered_json::array();
  BarChart bc;
  bc.title = "Held-out accuracy by patch size";
  bc.x_label = "patch size (tokens)";
  bc.y_label = "accuracy";
  bc.y_max = 1.0;
  BarSeries acc{"accuracy", {}, ""};
  for (const PatchPoint& p : pts) {
    t.add_row({std::to_string(p.patch), std::to_string(p.tokens), fixed(p.accuracy, 3),
               fixed(p.ms_per_step, 2), fixed(p.first_layer, 3), fixed(p.last_layer, 3)});
    js.push_back({{"patch", p.patch},
                  {"tokens", p.tokens},
                  {"accuracy", p.accuracy},
                  {"ms_per_step", p.ms_per_step},
                  {"first_layer_distance_ratio", p.first_layer},
                  {"last_layer_distance_ratio", p.last_layer}});
    bc.labels.push_back(fmt::format("P={} ({})", p.patch, p.tokens));
    acc.values.push_back(p.accuracy);
  }
  bc.series = {acc};
  ctx.table(t);
  ctx.result("patch_sweep", js);
  const PatchPoint &fine = pts.front(), &coarse = pts.back();
  ctx.note(fmt::format(
      "P={} gives {} tokens and {} attention scores per head and image; P={} gives {} and {}. "
      "Measured: {:.2f} against {:.2f} ms per training step (the feed-forward and projection "
      "work grows with the tokens, the attention scores with their square; at these tiny sizes "
      "fixed costs hide much of it). Accuracy {:.3f} against {:.3f}.",
      fine.patch, fine.tokens, fine.tokens * fine.tokens, coarse.patch, coarse.tokens,
      coarse.tokens * coarse.tokens, fine.ms_per_step, coarse.ms_per_step, fine.accuracy,
      coarse.accuracy));
  ctx.figure("patch_sizes", bar_chart_svg(bc),
             "Smaller patches: more tokens per image, more work per step");
}

}  // namespace

double agreement(const ShapesScore& a, const ShapesScore& b) {
  int64_t same = 0;
  for (size_t i = 0; i < a.predictions.size(); ++i) same += a.predictions[i] == b.predictions[i];
  return static_cast<double>(same) / static_cast<double>(a.predictions.size());
}

double dots_accuracy(const ShapesScore& s) {
  const auto h = static_cast<size_t>(data::ShapeClass::kDotsHorizontal);
  const auto v = static_cast<size_t>(data::ShapeClass::kDotsVertical);
  return (s.per_class[h] + s.per_class[v]) / 2;
}

void report_accuracy(const ShapesScore& with, const ShapesScore* without, RunContext& ctx) {
  std::vector<std::string> header{"model", "all"};
  for (const auto& n : data::shape_class_names()) header.push_back(n);
  Table t(fmt::format("Held-out accuracy per class (chance {:.3f})", kChance), header);
  auto row = [&](const std::string& name, const ShapesScore& s) {
    std::vector<std::string> cells{name, fixed(s.accuracy, 3)};
    for (double a : s.per_class) cells.push_back(fixed(a, 3));
    t.add_row(cells);
  };
  row("with positions", with);
  if (without) row("without positions", *without);
  ctx.table(t);
}

Models train_models(const Config& cfg, uint64_t seed) {
  const int64_t patch = cfg.get_int("patch_size");
  std::vector<ShapesVitSettings> all{settings(cfg, seed, patch, true)};
  const bool bare = cfg.get_bool("compare_positions"), left = cfg.get_bool("translation");
  if (bare) all.push_back(settings(cfg, seed, patch, false));
  if (left) all.push_back(settings(cfg, seed, patch, true));
  if (left) all.back().data.placement = data::Placement::kLeftHalf;
  for (int64_t p : cfg.get_ints("patch_sizes"))
    if (p != patch) all.push_back(settings(cfg, seed, p, true));
  // Independent models: each draws only from its own generators (its seed and seed + 1).
  std::vector<ShapesVitRun> runs =
      kit::side_by_side(all.size(), [&](size_t i) { return train_shapes_vit(all[i]); });
  Models m{.main = std::move(runs[0])};
  if (bare) m.bare = std::move(runs[1]);
  if (left) m.left = std::move(runs[bare ? 2 : 1]);
  m.sweep.assign(std::make_move_iterator(runs.begin() + 1 + bare + left),
                 std::make_move_iterator(runs.end()));
  return m;
}

MainRun main_run(const Config& cfg, ShapesVitRun trained, RunContext& ctx) {
  const int64_t patch = cfg.get_int("patch_size");
  MainRun m{.settings = settings(cfg, ctx.seed(), patch, true), .trained = std::move(trained)};
  Generator eval_gen(ctx.seed() + 100), shuffle_gen(ctx.seed() + 200);
  m.held_out = data::ShapesDataset(m.settings.data).sample(cfg.get_int("eval_size"), eval_gen);
  m.shuffled = shuffle_each(m.held_out, patch, shuffle_gen);
  ctx.section(fmt::format("Training a ViT with {}x{} patches and learned positions", patch, patch));
  const auto& o = m.trained.model->options();
  ctx.note(fmt::format(
      "{} layers, d_model {}, {} heads, {} patches + [CLS] = {} tokens per image; {} steps of "
      "{} fresh images in {:.1f} s ({:.2f} ms per step). Final training loss (mean of the last "
      "25 steps) {:.3f}.",
      o.num_layers, o.d_model, o.nhead, o.num_patches(), 1 + o.num_patches(), m.settings.steps,
      m.settings.batch, m.trained.seconds, m.ms_per_step(),
      kit::mean_of_last(m.trained.losses, 25)));
  report_training(m.trained, ctx);
  ctx.result("train_seconds", m.trained.seconds);
  ctx.result("final_loss", m.trained.losses.back());
  m.with = score_shapes(*m.trained.model, m.held_out);
  m.with_shuffled = score_shapes(*m.trained.model, m.shuffled);
  kit::record(ctx, {{"accuracy", m.with.accuracy},
                    {"per_class_accuracy", m.with.per_class},
                    {"chance", kChance},
                    {"shuffled_accuracy", m.with_shuffled.accuracy}});
  return m;
}

HeadReach head_reach(const MainRun& m, RunContext& ctx) {
  ctx.section("How far each head looks: mean attention distance");
  const auto& o = m.trained.model->options();
  HeadReach r{.dist = measure_distance(*m.trained.model, m.held_out),
              .uniform = uniform_attention_distance(o.grid(), o.patch_size),
              .heads = o.num_layers * o.nhead};
  report_distance(r.dist, r.uniform, kLocalFraction, ctx);
  std::vector<double> first, all;
  for (int64_t l = 0; l < o.num_layers; ++l)
    for (int64_t h = 0; h < o.nhead; ++h) {
      (l == 0 ? first : all).push_back(r.dist.mean(l, h));
      r.local_heads += r.dist.mean(l, h) < kLocalFraction * r.uniform;
      r.ink_share += r.dist.ink_mass(l, h) / static_cast<double>(r.heads);
      r.spread = std::max(r.spread, std::abs(r.dist.mean(l, h) / r.uniform - 1));
    }
  all.insert(all.end(), first.begin(), first.end());
  r.first_min = kit::min_of(first), r.first_max = kit::max_of(first);
  r.most_local = kit::min_of(all);
  r.first_mean = r.dist.layer_mean(0), r.last_mean = r.dist.layer_mean(o.num_layers - 1);
  kit::record(ctx, {{"local_heads", r.local_heads},
                    {"first_layer_mean_distance", r.first_mean},
                    {"last_layer_mean_distance", r.last_mean}});
  ctx.note(fmt::format(
      "Uniform attention over the {}x{} grid of patches would reach {:.2f} pixels on average. "
      "Layer 1's heads reach {:.2f} to {:.2f} pixels (mean {:.2f}); the last layer's mean is "
      "{:.2f}. {} of {} heads look locally (below {:.0f}% of uniform); the most local head "
      "reaches {:.2f} pixels.",
      o.grid(), o.grid(), r.uniform, r.first_min, r.first_max, r.first_mean, r.last_mean,
      r.local_heads, r.heads, 100 * kLocalFraction, r.most_local));
  report_cls_maps(*m.trained.model, m.held_out,
                  {data::ShapeClass::kDotsHorizontal, data::ShapeClass::kDotsVertical,
                   data::ShapeClass::kTriangle},
                  ctx);
  return r;
}

WithoutPositions without_positions(const ShapesVitRun& bare, const MainRun& m, RunContext& ctx) {
  ctx.section("Without position embeddings: a set of patches");
  const WithoutPositions w{score_shapes(*bare.model, m.held_out),
                           score_shapes(*bare.model, m.shuffled)};
  kit::record(ctx, {{"no_positions_accuracy", w.plain.accuracy},
                    {"no_positions_per_class_accuracy", w.plain.per_class},
                    {"no_positions_shuffled_accuracy", w.shuffled.accuracy},
                    {"no_positions_shuffle_agreement", agreement(w.plain, w.shuffled)},
                    {"shuffle_agreement", agreement(m.with, m.with_shuffled)}});
  return w;
}

void report_shuffling(const MainRun& m, const WithoutPositions& w, RunContext& ctx) {
  Table t("Every held-out image with its patches shuffled (one random permutation per image)",
          {"model", "accuracy", "shuffled", "same prediction"});
  t.add_row({"with positions", fixed(m.with.accuracy, 3), fixed(m.with_shuffled.accuracy, 3),
             fixed(agreement(m.with, m.with_shuffled), 3)});
  t.add_row({"without positions", fixed(w.plain.accuracy, 3), fixed(w.shuffled.accuracy, 3),
             fixed(agreement(w.plain, w.shuffled), 3)});
  ctx.table(t);
  ctx.note(fmt::format(
      "On the dot pairs, which differ only in where the two dots are, the model with positions "
      "scores {:.3f} and the one without {:.3f} (chance between the two: 0.5). Without "
      "positions the model is a function of the set of patches: shuffling them changes {:.1f}% "
      "of its predictions (float rounding only), against {:.1f}% with positions.",
      dots_accuracy(m.with), dots_accuracy(w.plain), 100 * (1 - agreement(w.plain, w.shuffled)),
      100 * (1 - agreement(m.with, m.with_shuffled))));
}

Translation translation(const Config& cfg, const ShapesVitRun& left, RunContext& ctx) {
  ctx.section("Translation: trained on shapes in the left half only");
  ShapesVitSettings ts = settings(cfg, ctx.seed(), cfg.get_int("patch_size"), true);
  ts.data.placement = data::Placement::kLeftHalf;
  data::ShapesDataset::Config right_half = ts.data;
  right_half.placement = data::Placement::kRightHalf;
  Generator left_gen(ctx.seed() + 300), right_gen(ctx.seed() + 400);
  const int64_t n = cfg.get_int("eval_size");
  const Translation tr{
      score_shapes(*left.model, data::ShapesDataset(ts.data).sample(n, left_gen)),
      score_shapes(*left.model, data::ShapesDataset(right_half).sample(n, right_gen))};
  Table t("Trained with every shape's centre in the left half of its range",
          {"held-out shapes", "accuracy"});
  t.add_row({"left half (as in training)", fixed(tr.on_left.accuracy, 3)});
  t.add_row({"right half (never seen there)", fixed(tr.on_right.accuracy, 3)});
  ctx.table(t);
  ctx.result("translation_left_accuracy", tr.on_left.accuracy);
  ctx.result("translation_right_accuracy", tr.on_right.accuracy);
  ctx.note(fmt::format(
      "A CNN with pooling would score about the same on both halves: its kernels slide. The "
      "ViT's patch embedding is shared by all patches too, but the position embeddings of the "
      "right-hand patches were never trained with a shape on them: {:.3f} on the left, {:.3f} "
      "on the right.",
      tr.on_left.accuracy, tr.on_right.accuracy));
  return tr;
}

void patch_sweep(const MainRun& m,
                 const HeadReach& reach,
                 const Models& models,
                 const Config& cfg,
                 RunContext& ctx) {
  std::vector<PatchPoint> sweep;
  auto next = models.sweep.begin();
  for (int64_t p : cfg.get_ints("patch_sizes")) {
    if (p == m.settings.model.patch_size) {
      sweep.push_back({p, 1 + m.trained.model->options().num_patches(), m.with.accuracy,
                       m.ms_per_step(), reach.first_mean / reach.uniform,
                       reach.last_mean / reach.uniform});
      continue;
    }
    if (sweep.empty()) ctx.section("Patch size");
    const ShapesVitRun& r = *next++;
    const auto& ro = r.model->options();
    const AttentionDistance d = measure_distance(*r.model, m.held_out);
    const double u = uniform_attention_distance(ro.grid(), p);
    sweep.push_back({p, 1 + ro.num_patches(), score_shapes(*r.model, m.held_out).accuracy,
                     1e3 * r.seconds / static_cast<double>(m.settings.steps), d.layer_mean(0) / u,
                     d.layer_mean(ro.num_layers - 1) / u});
  }
  std::sort(sweep.begin(), sweep.end(),
            [](const PatchPoint& a, const PatchPoint& b) { return a.patch < b.patch; });
  if (sweep.size() > 1) report_patch_sweep(sweep, ctx);
}

}  // namespace attn::experiments::vit
