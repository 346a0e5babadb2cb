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

#include "autograd/tensor.h"

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

}  // namespace attn::experiments
