// Where a Vision Transformer's heads look: how far, in pixels (mean attention distance,
// Dosovitskiy et al. 2020, Fig. 7), and how much on the patches that hold the picture.
//
//   AttentionDistance d(/*layers=*/4, /*heads=*/4, /*grid=*/4, /*patch_size=*/4);
//   d.add(layer, weights, ink);     // weights (B,H,1+N,1+N) of that layer, token 0 = [CLS];
//                                   // ink (B,N): 1 for patches with ink, 0 for background
//   d.mean(layer, head);            // pixels, averaged over every query patch of every image
//   d.cls_mass(layer, head);        // share of a patch's attention that goes to [CLS]
//   d.ink_mass(layer, head);        // share of its attention on the patches that hold ink
//   d.cls_ink_mass(layer, head);    // the same for the [CLS] query
//   d.ink_fraction();               // share of the patches that hold ink (uniform's value)
//   uniform_attention_distance(4, 4);   // the same measure for attention spread evenly
//
// For query patch i (not [CLS]) with attention w_ij over the tokens:
//   dist_i = sum_{j patch} w_ij |c_i - c_j| / sum_{j patch} w_ij
// where c_n = P (row(n), col(n)) is the position of patch n (its centre, up to a shift that
// cancels). The weight on [CLS], which has no place in the image, is left out and the rest
// renormalised; it is reported separately. Small distances: a local head (a convolution-like
// neighbourhood); distances near the uniform value: a global head. The ink shares are
// renormalised over the patches the same way; a head that looks by content (at the strokes of
// the shape, wherever they are) puts more than ink_fraction() of its attention there.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/tensor.h"

namespace attn::experiments {

class AttentionDistance {
 public:
  AttentionDistance(int64_t layers, int64_t heads, int64_t grid, int64_t patch_size);

  // weights (B,H,1+N,1+N), N = grid^2: every image's every query patch counts once. ink (B,N)
  // of 0/1, optional: without it the ink shares stay 0.
  void add(int64_t layer, const Tensor& weights, const Tensor* ink = nullptr);

  double mean(int64_t layer, int64_t head) const;          // pixels
  double cls_mass(int64_t layer, int64_t head) const;      // in [0, 1]
  double ink_mass(int64_t layer, int64_t head) const;      // in [0, 1]
  double cls_ink_mass(int64_t layer, int64_t head) const;  // in [0, 1]
  double ink_fraction() const;                             // in [0, 1]
  // The mean over the heads of one layer.
  double layer_mean(int64_t layer) const;

  int64_t layers() const { return layers_; }
  int64_t heads() const { return heads_; }

 private:
  size_t index(int64_t layer, int64_t head) const;

  int64_t layers_, heads_, grid_, patch_;
  std::vector<double> dist_sum_, cls_sum_, ink_sum_, cls_ink_sum_;
  std::vector<int64_t> count_, cls_count_;
  double ink_patches_ = 0, patches_ = 0;  // over the images given to layer 0
};

// The mean distance between a patch and every patch (itself included, as attention allows), over
// all query patches: what a head that attends uniformly would score.
double uniform_attention_distance(int64_t grid, int64_t patch_size);

}  // namespace attn::experiments
