// The measurements and figures of the vit-patches experiment that read a trained ViT: where
// its heads look (attention distance, ink shares), where its [CLS] token reads from, and what
// its position embeddings learned.
//
//   AttentionDistance d = measure_distance(vit, held_out);
//   report_distance(d, uniform_attention_distance(4, 4), 0.7, ctx);   // table, figure, results
//   report_cls_maps(vit, held_out, {data::ShapeClass::kTriangle}, ctx);
//   LayoutLearned l = report_positions(vit, untrained_vit, ctx);
#pragma once

#include <vector>

#include "data/images/shapes.h"
#include "experiments/common/attention_distance.h"
#include "experiments/run_context.h"
#include "nn/vision/vision_transformer.h"

namespace attn::experiments {

// Distances and ink shares of every head over the set (eval mode, no tape); a patch holds ink
// when its noise-free picture (set.clean) has a pixel above 0.5.
AttentionDistance measure_distance(nn::VisionTransformer& m, const data::ImageBatch& set);

// A table (every head's distance, per layer the mean, its ratio to uniform, the shares on [CLS]
// and on ink), the figure attention_distance (one dot per head per layer, reference lines at
// uniform and at local_fraction x uniform) and the results attention_distance, uniform_distance,
// ink_fraction.
void report_distance(const AttentionDistance& d,
                     double uniform,
                     double local_fraction,
                     RunContext& ctx);

// The [CLS] row of every layer (mean over heads) as a grid over the patches, for the first
// held-out image of each class in `classes`: figures examples (the pixels) and cls_attention.
void report_cls_maps(nn::VisionTransformer& m,
                     const data::ImageBatch& set,
                     const std::vector<data::ShapeClass>& classes,
                     RunContext& ctx);

// The learned position embeddings (experiments/common/patch_positions.h): each patch's cosine
// similarity to every other, as one small grid per patch laid out like the patches (the ViT
// paper's Fig. 7, centre; figure position_similarity), the similarity-distance correlation and
// the same-row-or-column gap, trained and at initialisation (`untrained`: the same model before
// training). Needs position embeddings.
struct LayoutLearned {
  double trained = 0, initial = 0;            // similarity-distance correlation
  double line_trained = 0, line_initial = 0;  // same row/column gap
};
LayoutLearned report_positions(const nn::VisionTransformer& m,
                               const nn::VisionTransformer& untrained,
                               RunContext& ctx);

}  // namespace attn::experiments
