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
#include "experiments/architectures/vit_patches_runs.h"
#include "experiments/common/shapes_vit.h"
#include "experiments/common/vit_figures.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

using vit::agreement, vit::dots_accuracy, vit::HeadReach, vit::kChance, vit::kLocalFraction,
    vit::MainRun, vit::Translation, vit::WithoutPositions;

// What the heads and the position embeddings learned, against 003 and the ViT paper.
void compare_attention(const MainRun& m,
                       const HeadReach& r,
                       const LayoutLearned& layout,
                       DocumentComparison& cmp) {
  const auto& o = m.trained.model->options();
  cmp.add_exact(
      "patches read as words by a plain transformer encoder classify images", "yes",
      kit::yes_no(m.with.accuracy > kChance + 0.5),
      fmt::format("held-out accuracy {:.3f} against chance {:.3f}", m.with.accuracy, kChance));
  // Where the heads look instead, for the reasons of any DIFFERS below.
  const std::string by_content = fmt::format(
      "; every head is within {:.0f}% of uniform: the heads look by content, {:.2f} of their "
      "attention on the {:.2f} of the patches that hold ink, and on a {}x{} grid with shapes "
      "spanning most of the image nothing is far away (the ViT paper's local heads come from "
      "224x224 images in 14x14 patches pre-trained on 300M images)",
      100 * r.spread, r.ink_share, r.dist.ink_fraction(), o.grid(), o.grid());
  const std::string see_above = fmt::format(
      "; every head is within {:.0f}% of uniform (see the locality row)", 100 * r.spread);
  const bool has_local = r.local_heads > 0;
  cmp.add_exact(
      "patches attend to each other like words: by what they contain (share of attention on the "
      "patches with ink > 1.1 x their share of the patches)",
      "yes", kit::yes_no(r.ink_share > 1.1 * r.dist.ink_fraction()),
      fmt::format("{:.3f} of the attention on {:.3f} of the patches", r.ink_share,
                  r.dist.ink_fraction()));
  cmp.add_exact(
      "locality is not built in, yet some heads learn to look nearby (ViT paper Fig. 7)", "yes",
      kit::yes_no(has_local),
      fmt::format("{} of {} heads below {:.0f}% of the uniform distance {:.2f} px; most local "
                  "{:.2f} px{}",
                  r.local_heads, r.heads, 100 * kLocalFraction, r.uniform, r.most_local,
                  has_local ? "" : by_content));
  const double local = kLocalFraction * r.uniform;
  const bool mixed = r.first_min < local && r.first_max >= local;
  cmp.add_exact("ViT paper (Fig. 7): the first layer mixes local and global heads", "yes",
                kit::yes_no(mixed),
                fmt::format("layer 1 heads {:.2f} to {:.2f} px; local below {:.2f} px{}",
                            r.first_min, r.first_max, local, mixed ? "" : see_above));
  // "More global": the last layer's mean at least 5% of the uniform distance above the first's.
  const bool deeper_global = r.last_mean - r.first_mean > 0.05 * r.uniform;
  cmp.add_exact("ViT paper: deeper layers attend more globally", "yes", kit::yes_no(deeper_global),
                fmt::format("mean distance layer 1 {:.2f} px, layer {} {:.2f} px (more global: "
                            "+{:.2f} px or more){}",
                            r.first_mean, o.num_layers, r.last_mean, 0.05 * r.uniform,
                            deeper_global ? "" : see_above));
  // Learned = a gain of more than 0.1 in the gap over the same embeddings at initialisation.
  cmp.add_exact(
      "what a CNN gets for free, a ViT learns from scratch (exercise 3): which patches share a "
      "row or a column, in its position embeddings (ViT paper Fig. 7: row-column structure)",
      "yes", kit::yes_no(layout.line_trained - layout.line_initial > 0.1),
      fmt::format("cosine similarity within a row or column minus elsewhere: {:.3f} after "
                  "training, {:.3f} at initialisation",
                  layout.line_trained, layout.line_initial));
  const bool near_alike = layout.trained < -0.3;
  cmp.add_exact(
      "ViT paper: nearby patches get alike position embeddings (similarity-distance correlation "
      "below -0.3)",
      "yes", kit::yes_no(near_alike),
      fmt::format("correlation {:.3f} after training, {:.3f} at initialisation{}", layout.trained,
                  layout.initial,
                  near_alike ? ""
                             : "; the only relation the labels need is the dots' row versus "
                               "column, and that is what the embeddings learned (row above); "
                               "nearness itself is never needed here"));
}

// Two standard errors of a difference of two accuracies on n images (p = 0.5, the widest): a
// smaller gap is what two equally good models show by chance.
double two_standard_errors(double n) {
  return 2 * kit::rate_difference_se(0.5, 0.5, std::max(1.0, n));
}

// Positions and shuffling: which spatial relations the embeddings carry.
void compare_positions(const MainRun& m,
                       const WithoutPositions& w,
                       int64_t eval_size,
                       DocumentComparison& cmp) {
  const double dots_n =
      static_cast<double>(eval_size) * 2 / static_cast<double>(data::kNumShapeClasses);
  const double dots_gap = dots_accuracy(m.with) - dots_accuracy(w.plain);
  cmp.add_exact(
      "the network learns which spatial relations matter: dots side by side vs stacked, "
      "through the position embeddings",
      "yes", kit::yes_no(dots_gap > two_standard_errors(dots_n)),
      fmt::format("dot-pair accuracy with positions {:.3f}, without {:.3f}: a gap of {:+.3f} "
                  "against 2 standard errors {:.3f}",
                  dots_accuracy(m.with), dots_accuracy(w.plain), dots_gap,
                  two_standard_errors(dots_n)));
  cmp.add(
      "without positions the [CLS] prediction ignores the patch order (attention is "
      "permutation-equivariant; 003 Big Ideas): share of predictions unchanged by shuffling "
      "the patches",
      1.0, agreement(w.plain, w.shuffled), 0.01);
  const double drop = m.with.accuracy - m.with_shuffled.accuracy;
  const double n = static_cast<double>(eval_size);
  cmp.add_exact("with positions, shuffling the patches hurts", "yes",
                kit::yes_no(drop > two_standard_errors(n)),
                fmt::format("accuracy {:.3f} -> {:.3f} shuffled; 2 standard errors {:.3f}",
                            m.with.accuracy, m.with_shuffled.accuracy, two_standard_errors(n)));
}

void run(const Config& cfg, RunContext& ctx) {
  vit::Models models = vit::train_models(cfg, ctx.seed());
  const MainRun m = vit::main_run(cfg, std::move(models.main), ctx);
  const HeadReach reach = vit::head_reach(m, ctx);
  ctx.result("ink_share", reach.ink_share);
  ctx.section("What the position embeddings learned: the layout of the patches");
  Generator init_again(ctx.seed());
  const nn::VisionTransformer untrained(m.settings.model, init_again);
  const LayoutLearned layout = report_positions(*m.trained.model, untrained, ctx);
  const bool positions = cfg.get_bool("compare_positions");
  const WithoutPositions without =
      positions ? vit::without_positions(models.bare, m, ctx) : WithoutPositions{};
  vit::report_accuracy(m.with, positions ? &without.plain : nullptr, ctx);
  if (positions) vit::report_shuffling(m, without, ctx);
  const bool translates = cfg.get_bool("translation");
  const Translation tr = translates ? vit::translation(cfg, models.left, ctx) : Translation{};
  vit::patch_sweep(m, reach, models, cfg, ctx);

  const auto& o = m.trained.model->options();
  DocumentComparison cmp(
      fmt::format("003 \"Vision transformers (ViT)\" and the ViT paper vs ours ({}x{} images, "
                  "{} steps, chance {:.3f})",
                  o.image_size, o.image_size, m.settings.steps, kChance));
  compare_attention(m, reach, layout, cmp);
  if (positions) compare_positions(m, without, cfg.get_int("eval_size"), cmp);
  if (translates) {
    const double gap = tr.on_left.accuracy - tr.on_right.accuracy,
                 two_se = two_standard_errors(static_cast<double>(cfg.get_int("eval_size")));
    cmp.add_exact(
        "translation equivariance is not built in (exercise 3): trained on shapes in the left "
        "half, the ViT loses accuracy on the right half",
        "yes", kit::yes_no(gap > two_se),
        fmt::format("accuracy {:.3f} on the left, {:.3f} on the right; 2 standard errors {:.3f}",
                    tr.on_left.accuracy, tr.on_right.accuracy, two_se));
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
