// vit-patches [003, "Vision transformers (ViT)" and Check Your Understanding 3]: a small Vision
// Transformer on generated shape images. Does a plain transformer encoder, reading patches as
// words, classify images? How far does each head look (mean attention distance per layer, the
// ViT paper's measure)? Which of a CNN's built-in biases does it give up, and what does it then
// learn: with and without position embeddings, on shuffled patches, at several patch sizes.
//
//   attnlab run vit-patches                              # ~1 min on 2 cores
//   attnlab run vit-patches --patch_size 2 --patch_sizes 2,4 --steps 3000
//
// Data (data/images/shapes.h): 16x16 grayscale images of seven classes at random places and
// sizes, with pixel noise, fresh every step. Two classes (dots side by side / one above the
// other) look the same patch by patch and differ only in where the patches are.
// Model (nn/vision/vision_transformer.h): patches -> Linear -> [CLS] + patches + learned
// positions -> pre-norm encoder layers -> LayerNorm -> head on [CLS].
// Step through: nn::patchify (the cut into patches on the tape), then
// nn::VisionTransformer::encode, then AttentionDistance::add.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"
#include "experiments/common/attention_distance.h"
#include "experiments/common/shapes_vit.h"
#include "experiments/common/vit_figures.h"
#include "experiments/experiment.h"
#include "experiments/report/charts.h"
#include "experiments/report/table.h"
#include "experiments/run_context.h"

namespace attn::experiments {

namespace {

constexpr double kChance = 1.0 / static_cast<double>(data::kNumShapeClasses);
// Heads whose mean distance is below this fraction of the uniform value count as local.
constexpr double kLocalFraction = 0.7;

std::string yes(bool b) {
  return b ? "yes" : "no";
}

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

// The fraction of images whose predicted class is the same in a and b.
double agreement(const ShapesScore& a, const ShapesScore& b) {
  int64_t same = 0;
  for (size_t i = 0; i < a.predictions.size(); ++i) same += a.predictions[i] == b.predictions[i];
  return static_cast<double>(same) / static_cast<double>(a.predictions.size());
}

// Mean accuracy on the two dot classes (the ones only positions separate).
double dots_accuracy(const ShapesScore& s) {
  const auto h = static_cast<size_t>(data::ShapeClass::kDotsHorizontal);
  const auto v = static_cast<size_t>(data::ShapeClass::kDotsVertical);
  return (s.per_class[h] + s.per_class[v]) / 2;
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
  LinePlot p;
  p.title = "ViT on the shape images: training loss";
  p.x_label = "step";
  p.y_label = "cross-entropy";
  p.series = {loss};
  p.refs = {{RefLine::kHorizontal, std::log(static_cast<double>(data::kNumShapeClasses)),
             "chance: log 7"}};
  ctx.figure("loss", line_plot_svg(p), "Training loss; fresh images every step");
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

void run(const Config& cfg, RunContext& ctx) {
  const int64_t patch = cfg.get_int("patch_size"), eval_size = cfg.get_int("eval_size");
  const ShapesVitSettings main_settings = settings(cfg, ctx.seed(), patch, true);
  Generator eval_gen(ctx.seed() + 100), shuffle_gen(ctx.seed() + 200);
  const data::ImageBatch held_out =
      data::ShapesDataset(main_settings.data).sample(eval_size, eval_gen);
  const data::ImageBatch shuffled = shuffle_each(held_out, patch, shuffle_gen);

  ctx.section(fmt::format("Training a ViT with {}x{} patches and learned positions", patch, patch));
  ShapesVitRun main = train_shapes_vit(main_settings);
  const auto& o = main.model->options();
  ctx.note(fmt::format(
      "{} layers, d_model {}, {} heads, {} patches + [CLS] = {} tokens per image; {} steps of "
      "{} fresh images in {:.1f} s ({:.2f} ms per step). Final training loss (mean of the last "
      "25 steps) {:.3f}.",
      o.num_layers, o.d_model, o.nhead, o.num_patches(), 1 + o.num_patches(), main_settings.steps,
      main_settings.batch, main.seconds,
      1e3 * main.seconds / static_cast<double>(main_settings.steps), [&] {
        double s = 0;
        const size_t k = std::min<size_t>(25, main.losses.size());
        for (size_t i = main.losses.size() - k; i < main.losses.size(); ++i) s += main.losses[i];
        return s / static_cast<double>(k);
      }()));
  report_training(main, ctx);
  ctx.result("train_seconds", main.seconds);
  ctx.result("final_loss", main.losses.back());

  const ShapesScore with = score_shapes(*main.model, held_out);
  const ShapesScore with_shuffled = score_shapes(*main.model, shuffled);
  ctx.result("accuracy", with.accuracy);
  ctx.result("per_class_accuracy", with.per_class);
  ctx.result("chance", kChance);
  ctx.result("shuffled_accuracy", with_shuffled.accuracy);

  ctx.section("How far each head looks: mean attention distance");
  const AttentionDistance dist = measure_distance(*main.model, held_out);
  const double uniform = uniform_attention_distance(o.grid(), o.patch_size);
  report_distance(dist, uniform, kLocalFraction, ctx);
  double first_min = 1e30, first_max = 0, global_min = 1e30;
  int64_t local_heads = 0;
  for (int64_t h = 0; h < o.nhead; ++h) {
    first_min = std::min(first_min, dist.mean(0, h));
    first_max = std::max(first_max, dist.mean(0, h));
  }
  for (int64_t l = 0; l < o.num_layers; ++l)
    for (int64_t h = 0; h < o.nhead; ++h) {
      global_min = std::min(global_min, dist.mean(l, h));
      local_heads += dist.mean(l, h) < kLocalFraction * uniform;
    }
  const double first_mean = dist.layer_mean(0), last_mean = dist.layer_mean(o.num_layers - 1);
  ctx.result("local_heads", local_heads);
  ctx.result("first_layer_mean_distance", first_mean);
  ctx.result("last_layer_mean_distance", last_mean);
  ctx.note(fmt::format(
      "Uniform attention over the {}x{} grid of patches would reach {:.2f} pixels on average. "
      "Layer 1's heads reach {:.2f} to {:.2f} pixels (mean {:.2f}); the last layer's mean is "
      "{:.2f}. {} of {} heads look locally (below {:.0f}% of uniform); the most local head "
      "reaches {:.2f} pixels.",
      o.grid(), o.grid(), uniform, first_min, first_max, first_mean, last_mean, local_heads,
      o.num_layers * o.nhead, 100 * kLocalFraction, global_min));
  report_cls_maps(*main.model, held_out,
                  {data::ShapeClass::kDotsHorizontal, data::ShapeClass::kDotsVertical,
                   data::ShapeClass::kTriangle},
                  ctx);
  ctx.section("What the position embeddings learned: the layout of the patches");
  Generator init_again(ctx.seed());
  const nn::VisionTransformer untrained(main_settings.model, init_again);
  const LayoutLearned layout = report_positions(*main.model, untrained, ctx);

  ShapesScore without, without_shuffled;
  const bool compare_positions = cfg.get_bool("compare_positions");
  if (compare_positions) {
    ctx.section("Without position embeddings: a set of patches");
    ShapesVitRun bare = train_shapes_vit(settings(cfg, ctx.seed(), patch, false));
    without = score_shapes(*bare.model, held_out);
    without_shuffled = score_shapes(*bare.model, shuffled);
    ctx.result("no_positions_accuracy", without.accuracy);
    ctx.result("no_positions_per_class_accuracy", without.per_class);
    ctx.result("no_positions_shuffled_accuracy", without_shuffled.accuracy);
    ctx.result("no_positions_shuffle_agreement", agreement(without, without_shuffled));
    ctx.result("shuffle_agreement", agreement(with, with_shuffled));
  }
  report_accuracy(with, compare_positions ? &without : nullptr, ctx);
  if (compare_positions) {
    Table t("Every held-out image with its patches shuffled (one random permutation per image)",
            {"model", "accuracy", "shuffled", "same prediction"});
    t.add_row({"with positions", fixed(with.accuracy, 3), fixed(with_shuffled.accuracy, 3),
               fixed(agreement(with, with_shuffled), 3)});
    t.add_row({"without positions", fixed(without.accuracy, 3), fixed(without_shuffled.accuracy, 3),
               fixed(agreement(without, without_shuffled), 3)});
    ctx.table(t);
    ctx.note(fmt::format(
        "On the dot pairs, which differ only in where the two dots are, the model with positions "
        "scores {:.3f} and the one without {:.3f} (chance between the two: 0.5). Without "
        "positions the model is a function of the set of patches: shuffling them changes {:.1f}% "
        "of its predictions (float rounding only), against {:.1f}% with positions.",
        dots_accuracy(with), dots_accuracy(without),
        100 * (1 - agreement(without, without_shuffled)),
        100 * (1 - agreement(with, with_shuffled))));
  }

  // Translation: a model that only ever saw shapes in the left half, scored on both halves.
  const bool translation = cfg.get_bool("translation");
  ShapesScore on_left, on_right;
  if (translation) {
    ctx.section("Translation: trained on shapes in the left half only");
    ShapesVitSettings ts = settings(cfg, ctx.seed(), patch, true);
    ts.data.placement = data::Placement::kLeftHalf;
    ShapesVitRun left = train_shapes_vit(ts);
    data::ShapesDataset::Config right_half = ts.data;
    right_half.placement = data::Placement::kRightHalf;
    Generator left_gen(ctx.seed() + 300), right_gen(ctx.seed() + 400);
    on_left = score_shapes(*left.model, data::ShapesDataset(ts.data).sample(eval_size, left_gen));
    on_right =
        score_shapes(*left.model, data::ShapesDataset(right_half).sample(eval_size, right_gen));
    Table t("Trained with every shape's centre in the left half of its range",
            {"held-out shapes", "accuracy"});
    t.add_row({"left half (as in training)", fixed(on_left.accuracy, 3)});
    t.add_row({"right half (never seen there)", fixed(on_right.accuracy, 3)});
    ctx.table(t);
    ctx.result("translation_left_accuracy", on_left.accuracy);
    ctx.result("translation_right_accuracy", on_right.accuracy);
    ctx.note(fmt::format(
        "A CNN with pooling would score about the same on both halves: its kernels slide. The "
        "ViT's patch embedding is shared by all patches too, but the position embeddings of the "
        "right-hand patches were never trained with a shape on them: {:.3f} on the left, {:.3f} "
        "on the right.",
        on_left.accuracy, on_right.accuracy));
  }

  std::vector<PatchPoint> sweep;
  for (int64_t p : cfg.get_ints("patch_sizes")) {
    if (p == patch) {
      sweep.push_back({p, 1 + o.num_patches(), with.accuracy,
                       1e3 * main.seconds / static_cast<double>(main_settings.steps),
                       first_mean / uniform, last_mean / uniform});
      continue;
    }
    if (sweep.empty()) ctx.section("Patch size");
    ShapesVitRun r = train_shapes_vit(settings(cfg, ctx.seed(), p, true));
    const auto& ro = r.model->options();
    const AttentionDistance d = measure_distance(*r.model, held_out);
    const double u = uniform_attention_distance(ro.grid(), p);
    sweep.push_back({p, 1 + ro.num_patches(), score_shapes(*r.model, held_out).accuracy,
                     1e3 * r.seconds / static_cast<double>(main_settings.steps),
                     d.layer_mean(0) / u, d.layer_mean(ro.num_layers - 1) / u});
  }
  std::sort(sweep.begin(), sweep.end(),
            [](const PatchPoint& a, const PatchPoint& b) { return a.patch < b.patch; });
  if (sweep.size() > 1) report_patch_sweep(sweep, ctx);

  DocumentComparison cmp(
      fmt::format("003 \"Vision transformers (ViT)\" and the ViT paper vs ours ({}x{} images, "
                  "{} steps, chance {:.3f})",
                  o.image_size, o.image_size, main_settings.steps, kChance));
  cmp.add_exact(
      "patches read as words by a plain transformer encoder classify images", "yes",
      yes(with.accuracy > kChance + 0.5),
      fmt::format("held-out accuracy {:.3f} against chance {:.3f}", with.accuracy, kChance));
  // Where the heads look instead, for the reasons of any DIFFERS below.
  double ink_share = 0, spread = 0;
  for (int64_t l = 0; l < o.num_layers; ++l)
    for (int64_t h = 0; h < o.nhead; ++h) {
      ink_share += dist.ink_mass(l, h) / static_cast<double>(o.num_layers * o.nhead);
      spread = std::max(spread, std::abs(dist.mean(l, h) / uniform - 1));
    }
  ctx.result("ink_share", ink_share);
  const std::string by_content = fmt::format(
      "; every head is within {:.0f}% of uniform: the heads look by content, {:.2f} of their "
      "attention on the {:.2f} of the patches that hold ink, and on a {}x{} grid with shapes "
      "spanning most of the image nothing is far away (the ViT paper's local heads come from "
      "224x224 images in 14x14 patches pre-trained on 300M images)",
      100 * spread, ink_share, dist.ink_fraction(), o.grid(), o.grid());
  const std::string see_above =
      fmt::format("; every head is within {:.0f}% of uniform (see the locality row)", 100 * spread);
  const bool has_local = local_heads > 0;
  cmp.add_exact(
      "patches attend to each other like words: by what they contain (share of attention on the "
      "patches with ink > 1.1 x their share of the patches)",
      "yes", yes(ink_share > 1.1 * dist.ink_fraction()),
      fmt::format("{:.3f} of the attention on {:.3f} of the patches", ink_share,
                  dist.ink_fraction()));
  cmp.add_exact(
      "locality is not built in, yet some heads learn to look nearby (ViT paper Fig. 7)", "yes",
      yes(has_local),
      fmt::format("{} of {} heads below {:.0f}% of the uniform distance {:.2f} px; most local "
                  "{:.2f} px{}",
                  local_heads, o.num_layers * o.nhead, 100 * kLocalFraction, uniform, global_min,
                  has_local ? "" : by_content));
  const bool mixed = first_min < kLocalFraction * uniform && first_max >= kLocalFraction * uniform;
  cmp.add_exact("ViT paper (Fig. 7): the first layer mixes local and global heads", "yes",
                yes(mixed),
                fmt::format("layer 1 heads {:.2f} to {:.2f} px; local below {:.2f} px{}", first_min,
                            first_max, kLocalFraction * uniform, mixed ? "" : see_above));
  // "More global": the last layer's mean at least 5% of the uniform distance above the first's.
  const bool deeper_global = last_mean - first_mean > 0.05 * uniform;
  cmp.add_exact("ViT paper: deeper layers attend more globally", "yes", yes(deeper_global),
                fmt::format("mean distance layer 1 {:.2f} px, layer {} {:.2f} px (more global: "
                            "+{:.2f} px or more){}",
                            first_mean, o.num_layers, last_mean, 0.05 * uniform,
                            deeper_global ? "" : see_above));
  // Learned = a gain of more than 0.1 in the gap over the same embeddings at initialisation.
  const bool lines_learned = layout.line_trained - layout.line_initial > 0.1;
  cmp.add_exact(
      "what a CNN gets for free, a ViT learns from scratch (exercise 3): which patches share a "
      "row or a column, in its position embeddings (ViT paper Fig. 7: row-column structure)",
      "yes", yes(lines_learned),
      fmt::format("cosine similarity within a row or column minus elsewhere: {:.3f} after "
                  "training, {:.3f} at initialisation",
                  layout.line_trained, layout.line_initial));
  const bool near_alike = layout.trained < -0.3;
  cmp.add_exact(
      "ViT paper: nearby patches get alike position embeddings (similarity-distance correlation "
      "below -0.3)",
      "yes", yes(near_alike),
      fmt::format("correlation {:.3f} after training, {:.3f} at initialisation{}", layout.trained,
                  layout.initial,
                  near_alike ? ""
                             : "; the only relation the labels need is the dots' row versus "
                               "column, and that is what the embeddings learned (row above); "
                               "nearness itself is never needed here"));
  if (compare_positions) {
    // Two standard errors of a difference of two accuracies on n images (p = 0.5, the widest):
    // a smaller gap is what two equally good models show by chance.
    auto noise = [](double n) { return 2 * std::sqrt(2 * 0.25 / std::max(1.0, n)); };
    const double dots_n =
        static_cast<double>(eval_size) * 2 / static_cast<double>(data::kNumShapeClasses);
    const double dots_gap = dots_accuracy(with) - dots_accuracy(without);
    cmp.add_exact(
        "the network learns which spatial relations matter: dots side by side vs stacked, "
        "through the position embeddings",
        "yes", yes(dots_gap > noise(dots_n)),
        fmt::format("dot-pair accuracy with positions {:.3f}, without {:.3f}: a gap of {:+.3f} "
                    "against 2 standard errors {:.3f}",
                    dots_accuracy(with), dots_accuracy(without), dots_gap, noise(dots_n)));
    cmp.add(
        "without positions attention is permutation-invariant (003 Big Ideas): share of "
        "predictions unchanged by shuffling the patches",
        1.0, agreement(without, without_shuffled), 0.01);
    const double drop = with.accuracy - with_shuffled.accuracy;
    cmp.add_exact(
        "with positions, shuffling the patches hurts", "yes",
        yes(drop > noise(static_cast<double>(eval_size))),
        fmt::format("accuracy {:.3f} -> {:.3f} shuffled; 2 standard errors {:.3f}", with.accuracy,
                    with_shuffled.accuracy, noise(static_cast<double>(eval_size))));
  }
  if (translation) {
    const double gap = on_left.accuracy - on_right.accuracy,
                 two_se = 2 * std::sqrt(2 * 0.25 / static_cast<double>(eval_size));
    cmp.add_exact(
        "translation equivariance is not built in (exercise 3): trained on shapes in the left "
        "half, the ViT loses accuracy on the right half",
        "yes", yes(gap > two_se),
        fmt::format("accuracy {:.3f} on the left, {:.3f} on the right; 2 standard errors {:.3f}",
                    on_left.accuracy, on_right.accuracy, two_se));
  }
  ctx.compare(cmp);
}

void check(const Config& c) {
  require_divides(c, "nhead", "d_model");
  const int64_t s = c.get_int("image_size");
  auto check_patch = [s](const std::string& flag, int64_t p) {
    if (s % p != 0 || p >= s)
      throw UsageError(fmt::format(
          "vit-patches: --{} {} must divide --image_size {} and be smaller than it", flag, p, s));
  };
  check_patch("patch_size", c.get_int("patch_size"));
  for (int64_t p : c.get_ints("patch_sizes")) check_patch("patch_sizes", p);
  if (c.get_real("min_radius") > c.get_real("max_radius") ||
      c.get_real("max_radius") > static_cast<double>(s) / 2 - 1)
    throw UsageError(
        fmt::format("vit-patches: need --min_radius <= --max_radius <= "
                    "--image_size/2 - 1 = {}",
                    static_cast<double>(s) / 2 - 1));
  if (c.get_int("warmup") >= c.get_int("steps"))
    throw UsageError("vit-patches: --warmup must be smaller than --steps");
}

}  // namespace

Experiment vit_patches() {
  Experiment e;
  e.name = "vit-patches";
  e.source = "003 Vision transformers (ViT), Check Your Understanding 3";
  e.purpose = "A small ViT on generated shapes: accuracy, attention distance, positions, patches";
  e.typical_time = "~1 min";
  e.config.add_int("image_size", 16, "image side in pixels", {.min = 8})
      .add_real("min_radius", 3, "smallest shape half-size in pixels", {.min = 1})
      .add_real("max_radius", 6, "largest shape half-size in pixels", {.min = 1})
      .add_real("noise", 0.15, "standard deviation of the pixel noise", {.min = 0})
      .add_int("patch_size", 4, "patch side P of the main model", {.min = 1})
      .add_bool("compare_positions", true, "also train without position embeddings")
      .add_bool("translation", true,
                "also train on shapes in the left half only and test on the right half")
      .add_ints("patch_sizes", {4, 8}, "patch sizes to compare (each its own model)", {.min = 1})
      .add_int("seed", 1, "random seed (weights, images, held-out set)", {.min = 0});
  add_model_fields(e.config, {.d_model = 32, .nhead = 4, .num_layers = 4, .dim_ff = 64});
  // Adam, linear warm-up then cosine decay (experiments/common/shapes_vit.h).
  add_optimizer_fields(e.config, {.steps = 1500, .batch_size = 64, .lr = 2e-3, .warmup = 100});
  add_eval_fields(e.config, {.eval_size = 1000});
  e.quick = {{"steps", "300"}, {"warmup", "30"}, {"eval_size", "300"}, {"patch_sizes", "4,8"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
