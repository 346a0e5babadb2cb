// The measurements of vit-patches (experiments/architectures/vit_patches.cpp), one function
// per part of the run: train every model, report the main one, measure how far its heads look,
// score the ones without position embeddings and on half the image, sweep the patch size.
//
//   vit::Models models = vit::train_models(cfg, ctx.seed());
//   const vit::MainRun m = vit::main_run(cfg, std::move(models.main), ctx);  // held-out scores
//   const vit::HeadReach reach = vit::head_reach(m, ctx);  // attention distance per head
#pragma once

#include <cstdint>

#include "experiments/common/attention_distance.h"
#include "experiments/common/shapes_vit.h"
#include "experiments/config.h"
#include "experiments/run_context.h"

namespace attn::experiments::vit {

constexpr double kChance = 1.0 / static_cast<double>(data::kNumShapeClasses);
// Heads whose mean distance is below this fraction of the uniform value count as local.
constexpr double kLocalFraction = 0.7;

// The main model's run: its settings, the trained model, the held-out set (plain and with the
// patches of every image shuffled) and its scores on both.
struct MainRun {
  ShapesVitSettings settings;
  ShapesVitRun trained;
  data::ImageBatch held_out, shuffled;
  ShapesScore with, with_shuffled;
  double ms_per_step() const { return 1e3 * trained.seconds / static_cast<double>(settings.steps); }
};

// How far the main model's heads look: mean attention distance (pixels) per layer and head.
struct HeadReach {
  AttentionDistance dist;
  double uniform = 0;  // the distance of uniform attention over the grid
  double first_min = 0, first_max = 0, first_mean = 0, last_mean = 0, most_local = 0;
  int64_t heads = 0, local_heads = 0;  // local: below kLocalFraction of uniform
  double ink_share = 0;                // attention on the patches with ink, mean over heads
  double spread = 0;                   // max over heads of |distance / uniform - 1|
};

// The same model without position embeddings: a function of the set of patches.
struct WithoutPositions {
  ShapesScore plain, shuffled;
};

// Translation: a model that only ever saw shapes in the left half, scored on both halves.
struct Translation {
  ShapesScore on_left, on_right;
};

// Every model of the run: the main one; without position embeddings and on the left half only
// (when --compare_positions and --translation ask for them); one per other patch size.
struct Models {
  ShapesVitRun main, bare, left;
  std::vector<ShapesVitRun> sweep;  // the sizes of --patch_sizes other than --patch_size, in order
};
Models train_models(const Config& cfg, uint64_t seed);

MainRun main_run(const Config& cfg, ShapesVitRun trained, RunContext& ctx);
HeadReach head_reach(const MainRun& m, RunContext& ctx);
WithoutPositions without_positions(const ShapesVitRun& bare, const MainRun& m, RunContext& ctx);
Translation translation(const Config& cfg, const ShapesVitRun& left, RunContext& ctx);
// Every patch size of --patch_sizes: the main model where it matches, models.sweep elsewhere.
void patch_sweep(const MainRun& m,
                 const HeadReach& reach,
                 const Models& models,
                 const Config& cfg,
                 RunContext& ctx);
// Held-out accuracy per class, with and (when given) without position embeddings.
void report_accuracy(const ShapesScore& with, const ShapesScore* without, RunContext& ctx);
// Both models on shuffled patches: accuracy and the share of unchanged predictions.
void report_shuffling(const MainRun& m, const WithoutPositions& w, RunContext& ctx);
// The fraction of images whose predicted class is the same in a and b.
double agreement(const ShapesScore& a, const ShapesScore& b);
// Mean accuracy on the two dot classes (the ones only positions separate).
double dots_accuracy(const ShapesScore& s);

}  // namespace attn::experiments::vit
