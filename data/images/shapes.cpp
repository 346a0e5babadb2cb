#include "data/images/shapes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "autograd/error.h"
#include "data/task.h"

namespace attn::data {

namespace {

struct Point {
  double x, y;  // x = column, y = row, in pixels; pixel (i, j) has its centre at (j + .5, i + .5)
};

// Distance from p to the segment [a, b].
double segment_distance(Point p, Point a, Point b) {
  const double dx = b.x - a.x, dy = b.y - a.y, len2 = dx * dx + dy * dy;
  const double t =
      len2 > 0 ? std::clamp(((p.x - a.x) * dx + (p.y - a.y) * dy) / len2, 0.0, 1.0) : 0.0;
  return std::hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy));
}

double polyline_distance(Point p, const std::vector<Point>& pts, bool closed) {
  double d = 1e30;
  const size_t n = pts.size(), segs = closed ? n : n - 1;
  for (size_t i = 0; i < segs; ++i) d = std::min(d, segment_distance(p, pts[i], pts[(i + 1) % n]));
  return d;
}

// Distance from p to the outline of shape c centred at o with size r (angle: the line's
// direction; jitter in [-2, 2]: the second dot's offset across the pair's axis).
double outline_distance(ShapeClass c, Point p, Point o, double r, double angle, double jitter) {
  switch (c) {
    case ShapeClass::kSquare:
      return polyline_distance(
          p, {{o.x - r, o.y - r}, {o.x + r, o.y - r}, {o.x + r, o.y + r}, {o.x - r, o.y + r}},
          true);
    case ShapeClass::kCircle:
      return std::abs(std::hypot(p.x - o.x, p.y - o.y) - r);
    case ShapeClass::kTriangle:  // apex up (rows grow downwards)
      return polyline_distance(p, {{o.x, o.y - r}, {o.x + r, o.y + r}, {o.x - r, o.y + r}}, true);
    case ShapeClass::kCross:
      return std::min(segment_distance(p, {o.x - r, o.y}, {o.x + r, o.y}),
                      segment_distance(p, {o.x, o.y - r}, {o.x, o.y + r}));
    case ShapeClass::kLine: {
      const double cx = r * std::cos(angle), cy = r * std::sin(angle);
      return segment_distance(p, {o.x - cx, o.y - cy}, {o.x + cx, o.y + cy});
    }
    case ShapeClass::kDotsHorizontal:
    case ShapeClass::kDotsVertical: {
      // Dots at o + a and o - a + jitter across the axis: without the jitter both dots would
      // sit at the same offset inside their patches across the axis, a cue that needs no
      // positions; a jitter uniform over 4 pixels (a patch of the default 4) makes it useless.
      const bool h = c == ShapeClass::kDotsHorizontal;
      const Point a{h ? r : 0, h ? 0 : r}, b{h ? -r : jitter, h ? jitter : -r};
      // Filled discs of radius 1: distance to the disc, 0 inside.
      const double d = std::min(std::hypot(p.x - o.x - a.x, p.y - o.y - a.y),
                                std::hypot(p.x - o.x - b.x, p.y - o.y - b.y));
      return std::max(0.0, d - 1.0);
    }
  }
  return 1e30;
}

}  // namespace

const std::vector<std::string>& shape_class_names() {
  static const std::vector<std::string> names = {"square", "circle", "triangle", "cross",
                                                 "line",   "dots_h", "dots_v"};
  return names;
}

ShapesDataset::ShapesDataset(Config config) : config_(config) {
  const auto s = static_cast<double>(config_.image_size);
  if (config_.image_size < 8)
    throw Error(
        fmt::format("ShapesDataset: image_size must be at least 8, got {}", config_.image_size));
  if (!(config_.min_radius >= 1 && config_.min_radius <= config_.max_radius &&
        config_.max_radius <= s / 2 - 1))
    throw Error(
        fmt::format("ShapesDataset: need 1 <= min_radius <= max_radius <= image_size/2 - "
                    "1 = {}, got {} and {}",
                    s / 2 - 1, config_.min_radius, config_.max_radius));
  if (!(config_.noise >= 0))
    throw Error(fmt::format("ShapesDataset: noise must be >= 0, got {}", config_.noise));
}

void ShapesDataset::draw(
    ShapeClass c, Generator& gen, real* pixels, bool add_noise, real* clean) const {
  const int64_t s = config_.image_size;
  const double r = config_.min_radius + gen.uniform() * (config_.max_radius - config_.min_radius);
  // The centre keeps the shape and its stroke (about 1 pixel) inside the image.
  const double lo = r + 1, hi = static_cast<double>(s) - r - 1;
  const double mid = (lo + hi) / 2;
  const double x_lo = config_.placement == Placement::kRightHalf ? mid : lo;
  const double x_hi = config_.placement == Placement::kLeftHalf ? mid : hi;
  const Point o{x_lo + gen.uniform() * (x_hi - x_lo), lo + gen.uniform() * (hi - lo)};
  const double angle = gen.uniform() * std::numbers::pi, jitter = 4 * gen.uniform() - 2;
  for (int64_t i = 0; i < s; ++i)
    for (int64_t j = 0; j < s; ++j) {
      const Point p{static_cast<double>(j) + 0.5, static_cast<double>(i) + 0.5};
      // Ink 1 within half a pixel of the outline, fading to 0 one pixel further (anti-aliasing).
      double v = std::clamp(1.5 - outline_distance(c, p, o, r, angle, jitter), 0.0, 1.0);
      if (clean) clean[i * s + j] = static_cast<real>(v);
      if (add_noise) v += config_.noise * gen.normal();
      pixels[i * s + j] = static_cast<real>(v);
    }
}

ImageBatch ShapesDataset::sample(int64_t n, Generator& gen) const {
  const int64_t s = config_.image_size;
  ImageBatch b{Tensor::zeros({n, 1, s, s}), Tensor::zeros({n}), Tensor::zeros({n, 1, s, s})};
  for (int64_t k = 0; k < n; ++k) {
    const int64_t c = gen.randint(kNumShapeClasses);
    b.labels[k] = static_cast<real>(c);
    draw(static_cast<ShapeClass>(c), gen, b.images.data() + k * s * s, true,
         b.clean.data() + k * s * s);
  }
  return b;
}

Tensor shuffle_patches(const Tensor& images, int64_t patch_size, const std::vector<int64_t>& perm) {
  if (images.rank() != 4 || images.size(2) != images.size(3) || patch_size <= 0 ||
      images.size(2) % patch_size != 0)
    throw Error(
        fmt::format("shuffle_patches: images must be (B,C,S,S) with S divisible by the "
                    "patch size {}, got {}",
                    patch_size, shape_str(images.shape())));
  const int64_t s = images.size(2), p = patch_size, g = s / p,
                planes = images.size(0) * images.size(1);
  std::vector<int64_t> seen(perm.size(), 0);
  for (int64_t v : perm)
    if (v >= 0 && v < static_cast<int64_t>(perm.size())) ++seen[static_cast<size_t>(v)];
  if (static_cast<int64_t>(perm.size()) != g * g ||
      std::any_of(seen.begin(), seen.end(), [](int64_t k) { return k != 1; }))
    throw Error(fmt::format("shuffle_patches: perm must be a permutation of 0..{}", g * g - 1));
  Tensor out = Tensor::zeros(images.shape());
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t n = 0; n < g * g; ++n) {
      const int64_t src = perm[static_cast<size_t>(n)];
      const int64_t sr = src / g * p, sc = src % g * p, dr = n / g * p, dc = n % g * p;
      for (int64_t i = 0; i < p; ++i)
        for (int64_t j = 0; j < p; ++j)
          out[(pl * s + dr + i) * s + dc + j] = images[(pl * s + sr + i) * s + sc + j];
    }
  return out;
}

Tensor patches_above(const Tensor& images, int64_t patch_size, real level) {
  if (images.rank() != 4 || images.size(1) != 1 || images.size(2) != images.size(3) ||
      patch_size <= 0 || images.size(2) % patch_size != 0)
    throw Error(
        fmt::format("patches_above: images must be (B,1,S,S) with S divisible by the "
                    "patch size {}, got {}",
                    patch_size, shape_str(images.shape())));
  const int64_t b = images.size(0), s = images.size(2), p = patch_size, g = s / p;
  Tensor out = Tensor::zeros({b, g * g});
  for (int64_t k = 0; k < b; ++k)
    for (int64_t i = 0; i < s; ++i)
      for (int64_t j = 0; j < s; ++j)
        if (images[(k * s + i) * s + j] > level) out[k * g * g + i / p * g + j / p] = 1;
  return out;
}

std::vector<int64_t> random_permutation(int64_t n, Generator& gen) {
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = i;
  shuffle(perm, gen);
  return perm;
}

}  // namespace attn::data
