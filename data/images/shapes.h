// Small grayscale images of shapes, drawn in code (no download): a classification task for the
// Vision Transformer experiment. Deterministic for a seed.
//
//   attn::data::ShapesDataset shapes({.image_size = 16, .noise = 0.15});
//   attn::Generator gen(7);
//   attn::data::ImageBatch b = shapes.sample(64, gen);   // b.images (64,1,16,16), b.labels (64)
//   attn::data::shape_class_names()[b.labels[0]];        // "square", "circle", ...
//   attn::Tensor s = attn::data::shuffle_patches(b.images, 4, perm);  // patches rearranged
//
// Seven classes, each at a random centre and size r (half its extent, in [min_radius,
// max_radius] pixels), drawn with a 1-pixel stroke and anti-aliased edges, then plus Gaussian
// pixel noise:
//   square    axis-aligned outline, side 2r          circle   outline of radius r
//   triangle  upright outline, base 2r, height 2r     cross    "+" with arms of length r
//   line      one stroke of length 2r at a random angle
//   dots_h    two dots 2r apart side by side         dots_v   the same pair, one above the other
//             (the second dot shifted up to 2 pixels across the pair's axis)
// The two dot classes differ only in where the dots are, not in what they look like: with
// patches of side P < 2r each dot lies in its own patch, so a model that sees only which
// patches are present (no positions) cannot tell them apart. Everything else can be told from
// local pieces (a corner, an arc, a crossing).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"

namespace attn::data {

// Where a shape's centre may lie across the image: anywhere, or only in the left or right half
// of its allowed range of columns (a translation the model never saw, for a held-out test).
enum class Placement { kAnywhere, kLeftHalf, kRightHalf };

enum class ShapeClass {
  kSquare,
  kCircle,
  kTriangle,
  kCross,
  kLine,
  kDotsHorizontal,
  kDotsVertical
};
inline constexpr int64_t kNumShapeClasses = 7;
// "square", "circle", "triangle", "cross", "line", "dots_h", "dots_v" (index = class id).
const std::vector<std::string>& shape_class_names();

struct ImageBatch {
  Tensor images;  // (B,1,S,S), pixel values about 0 (background) and 1 (ink), plus noise
  Tensor labels;  // (B) class ids as reals
  Tensor clean;   // (B,1,S,S), the same pictures without the noise (where the ink is)
};

class ShapesDataset {
 public:
  struct Config {
    int64_t image_size = 16;  // S, at least 8
    double min_radius = 3;    // r range in pixels; 1 <= min_radius <= max_radius <= S/2 - 1.5
    double max_radius = 6;
    double noise = 0.15;  // standard deviation of the Gaussian pixel noise
    Placement placement = Placement::kAnywhere;
  };
  explicit ShapesDataset(Config config);

  const Config& config() const { return config_; }
  int64_t num_classes() const { return kNumShapeClasses; }

  // n images with uniformly drawn classes.
  ImageBatch sample(int64_t n, Generator& gen) const;
  // One image of class c into pixels (S*S, row-major), centre and size drawn from gen; noise
  // added when add_noise. clean, if given, receives the picture without noise.
  void draw(ShapeClass c,
            Generator& gen,
            real* pixels,
            bool add_noise = true,
            real* clean = nullptr) const;

 private:
  Config config_;
};

// images (B,C,S,S) -> the same images with their P x P patches moved: patch perm[n] of the input
// (row-major over the (S/P)x(S/P) grid) becomes patch n of the output. perm is a permutation of
// 0 .. (S/P)^2 - 1.
Tensor shuffle_patches(const Tensor& images, int64_t patch_size, const std::vector<int64_t>& perm);
// (B,1,S,S) images -> (B, (S/P)^2): 1 where a P x P patch holds a pixel above `level`, else 0.
Tensor patches_above(const Tensor& images, int64_t patch_size, real level);
// A uniformly random permutation of 0 .. n-1 (data::shuffle, Fisher-Yates with gen).
std::vector<int64_t> random_permutation(int64_t n, Generator& gen);

}  // namespace attn::data
