// The measurements and figures of the vit-patches experiment that read a trained ViT: where
// its heads look (attention distance, ink shares), where its [CLS] token reads from, and what
// its position embeddings learned.
//
//   AttentionDistance d = measure_distance(vit, held_out);
//   report_distance(d, uniform_attention_distance(4, 4), 0.7, ctx);   // table, figure, results
//   report_cls_maps(vit, held_out, {data::ShapeClass::kTriangle}, ctx);
//   LayoutLearned l = report_positions(vit, untrained_vit, ctx);
//
// What a ViT's learned position embeddings know about the 2D layout of the patches (the ViT
// paper's Fig. 7, centre): nothing tells the model that patch 5 sits next to patch 6 or above
// patch 9; if it needs that, it must learn it, and then the embeddings of nearby patches end up
// alike.
//
//   Tensor sim = position_similarity(vit.pos_embed.value());   // (N,N) cosine similarities
//   double r = similarity_distance_correlation(sim, /*grid=*/4); // < 0: near patches alike
//   double g = same_line_gap(sim, 4);    // > 0: patches in one row or column alike
//
// Row 0 of pos_embed (the [CLS] slot) has no place in the image and is left out. The patch rows
// are centred first (their mean over the patches subtracted): a part shared by every patch says
// nothing about where a patch is, yet it would pull every cosine towards 1.
#pragma once

#include <cstdint>
#include <vector>

#include "data/images/shapes.h"
#include "experiments/common/attention_distance.h"
#include "experiments/run_context.h"
#include "nn/vision/vision_transformer.h"

namespace attn::experiments {

// pos_embed (1,1+N,d) -> (N,N): cos(p_i - m, p_j - m) of the patch rows, m their mean.
Tensor position_similarity(const Tensor& pos_embed);

// Pearson correlation, over the pairs i != j, between sim(i,j) and the distance between patches
// i and j on the grid x grid layout (row-major). -1: similarity falls exactly linearly with
// distance; 0: no relation (random embeddings).
double similarity_distance_correlation(const Tensor& sim, int64_t grid);

// The mean of sim(i,j) over the pairs i != j in one grid row or one grid column, minus the mean
// over the pairs that share neither (the ViT paper's "row-column structure").
double same_line_gap(const Tensor& sim, int64_t grid);

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

// The learned position embeddings (position_similarity and the two measures above): each patch's
// cosine similarity to every other, as one small grid per patch laid out like the patches (the ViT
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
