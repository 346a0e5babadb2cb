// The generated shape images: deterministic for a seed, every class drawn where it should be,
// and the patch shuffle used by the ViT experiment moves whole patches.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"
#include "data/images/shapes.h"

namespace attn::data {

namespace {

// Rows and columns that hold ink (value > 0.5) in a noise-free (S,S) image.
struct InkExtent {
  int64_t rows = 0, cols = 0, pixels = 0;
};
InkExtent ink_extent(const std::vector<real>& img, int64_t s) {
  int64_t r0 = s, r1 = -1, c0 = s, c1 = -1;
  InkExtent e;
  for (int64_t i = 0; i < s; ++i)
    for (int64_t j = 0; j < s; ++j)
      if (img[static_cast<size_t>(i * s + j)] > 0.5f) {
        ++e.pixels;
        r0 = std::min(r0, i), r1 = std::max(r1, i), c0 = std::min(c0, j), c1 = std::max(c1, j);
      }
  e.rows = r1 - r0 + 1, e.cols = c1 - c0 + 1;
  return e;
}

}  // namespace

TEST_SUITE("data") {
  TEST_CASE("shapes: the same seed draws the same images, another seed others") {
    ShapesDataset d({});
    Generator a(5), b(5), c(6);
    const ImageBatch x = d.sample(20, a), y = d.sample(20, b), z = d.sample(20, c);
    REQUIRE(x.images.shape() == Shape{20, 1, 16, 16});
    REQUIRE(x.labels.shape() == Shape{20});
    bool same = true, differ = false;
    for (int64_t i = 0; i < x.images.numel(); ++i) {
      same = same && x.images[i] == y.images[i];
      differ = differ || x.images[i] != z.images[i];
    }
    CHECK(same);
    CHECK(differ);
    for (int64_t i = 0; i < 20; ++i) CHECK(x.labels[i] == y.labels[i]);
  }

  TEST_CASE("shapes: classes are drawn about equally often") {
    ShapesDataset d({});
    Generator gen(1);
    const ImageBatch b = d.sample(1400, gen);
    std::vector<int64_t> count(kNumShapeClasses, 0);
    for (int64_t i = 0; i < 1400; ++i) ++count[static_cast<size_t>(b.labels[i])];
    // 200 expected per class; the standard deviation is about 13.
    for (int64_t k : count) CHECK((k > 140 && k < 260));
    CHECK(shape_class_names().size() == static_cast<size_t>(kNumShapeClasses));
  }

  TEST_CASE("shapes: each class has its extent and orientation, inside the image") {
    const int64_t s = 16;
    ShapesDataset d({.image_size = s, .min_radius = 3, .max_radius = 6, .noise = 0});
    Generator gen(11);
    std::vector<real> img(static_cast<size_t>(s * s));
    for (int trial = 0; trial < 30; ++trial)
      for (int64_t c = 0; c < kNumShapeClasses; ++c) {
        d.draw(static_cast<ShapeClass>(c), gen, img.data(), false);
        CAPTURE(shape_class_names()[static_cast<size_t>(c)]);
        for (real v : img) REQUIRE((v >= 0 && v <= 1));
        const InkExtent e = ink_extent(img, s);
        CHECK(e.pixels >= 6);
        switch (static_cast<ShapeClass>(c)) {
          case ShapeClass::kDotsHorizontal:  // dots 2r >= 6 apart, at most 2 pixels off-axis
            CHECK(e.rows <= 6);
            CHECK(e.cols >= 8);
            break;
          case ShapeClass::kDotsVertical:
            CHECK(e.cols <= 6);
            CHECK(e.rows >= 8);
            break;
          case ShapeClass::kLine:
            CHECK(std::max(e.rows, e.cols) >= 6);
            break;
          default:  // square, circle, triangle and cross span 2r + stroke in both directions
            CHECK(e.rows >= 6);
            CHECK(e.cols >= 6);
            CHECK(std::abs(e.rows - e.cols) <= 1);
        }
      }
  }

  TEST_CASE("shapes: noise has the configured standard deviation") {
    ShapesDataset d({.noise = 0.2});
    std::vector<real> clean(256), noisy(256);
    double sum = 0, sq = 0;
    int64_t n = 0;
    for (uint64_t seed = 0; seed < 50; ++seed) {
      // The same generator state draws the same placement; only the noisy call then adds noise.
      Generator g1(seed), g2(seed);
      d.draw(ShapeClass::kCircle, g1, clean.data(), false);
      d.draw(ShapeClass::kCircle, g2, noisy.data(), true);
      for (size_t i = 0; i < clean.size(); ++i, ++n) {
        const double e = noisy[i] - clean[i];
        sum += e, sq += e * e;
      }
    }
    // 12800 draws: the sample mean is within 0.01 of 0 and the deviation within 5% of 0.2.
    CHECK(std::abs(sum / n) < 0.01);
    CHECK(std::sqrt(sq / n) == doctest::Approx(0.2).epsilon(0.05));
  }

  TEST_CASE("shapes: the clean picture is the image without its noise; patches_above finds ink") {
    ShapesDataset d({.noise = 0.2});
    Generator a(8), b(8);
    const ImageBatch x = d.sample(10, a);
    // A generator in the same state draws the same first image: its class, then its placement.
    std::vector<real> first(256);
    const auto c = static_cast<ShapeClass>(b.randint(kNumShapeClasses));
    d.draw(c, b, first.data(), false);
    for (int64_t i = 0; i < 256; ++i) REQUIRE(x.clean[i] == first[static_cast<size_t>(i)]);
    Tensor img = Tensor::zeros({2, 1, 8, 8});
    img[(0 * 8 + 5) * 8 + 1] = 0.9f;  // image 0, pixel (5,1): patch (1,0) of a 2x2 grid
    img[(8 + 2) * 8 + 6] = 0.4f;      // image 1, pixel (2,6): below the level
    const Tensor ink = patches_above(img, 4, 0.5f);
    REQUIRE(ink.shape() == Shape{2, 4});
    for (int64_t k = 0; k < 8; ++k) CHECK(ink[k] == (k == 2 ? 1 : 0));
  }

  TEST_CASE("shapes: placement keeps the shapes in the left or right half") {
    // Mean ink column over many noise-free images: the centre lies in [r+1, 8] (left) or
    // [8, 15-r] (right), so about 6.25 and 8.75 (pixel j has its centre at j + 0.5).
    for (Placement pl : {Placement::kLeftHalf, Placement::kRightHalf}) {
      ShapesDataset d({.noise = 0, .placement = pl});
      Generator gen(4);
      const ImageBatch b = d.sample(300, gen);
      double mass = 0, col = 0;
      for (int64_t k = 0; k < 300; ++k)
        for (int64_t i = 0; i < 16; ++i)
          for (int64_t j = 0; j < 16; ++j) {
            const double v = b.clean[(k * 16 + i) * 16 + j];
            mass += v, col += v * static_cast<double>(j);
          }
      CAPTURE(static_cast<int>(pl));
      if (pl == Placement::kLeftHalf)
        CHECK(col / mass < 7);
      else
        CHECK(col / mass > 8);
    }
  }

  TEST_CASE("shapes: bad settings are refused") {
    CHECK_THROWS_AS(ShapesDataset({.image_size = 6}), Error);
    CHECK_THROWS_AS(ShapesDataset({.min_radius = 5, .max_radius = 4}), Error);
    CHECK_THROWS_AS(ShapesDataset({.max_radius = 7.5}), Error);  // > 16/2 - 1
    CHECK_THROWS_AS(ShapesDataset({.noise = -1}), Error);
  }

  TEST_CASE("shuffle_patches moves whole patches and its inverse restores the image") {
    Generator gen(2);
    const Tensor x = Tensor::randn({2, 3, 8, 8}, gen);
    const std::vector<int64_t> id = {0, 1, 2, 3};
    const Tensor same = shuffle_patches(x, 4, id);
    for (int64_t i = 0; i < x.numel(); ++i) REQUIRE(same[i] == x[i]);
    const std::vector<int64_t> perm = {2, 0, 3, 1};
    const Tensor y = shuffle_patches(x, 4, perm);
    // Output patch n is input patch perm[n]: check pixel (1,2) of every patch of every plane.
    for (int64_t pl = 0; pl < 6; ++pl)
      for (int64_t n = 0; n < 4; ++n) {
        const int64_t src = perm[static_cast<size_t>(n)];
        CHECK(y[(pl * 8 + n / 2 * 4 + 1) * 8 + n % 2 * 4 + 2] ==
              x[(pl * 8 + src / 2 * 4 + 1) * 8 + src % 2 * 4 + 2]);
      }
    std::vector<int64_t> inverse(4);
    for (size_t n = 0; n < 4; ++n) inverse[static_cast<size_t>(perm[n])] = static_cast<int64_t>(n);
    const Tensor back = shuffle_patches(y, 4, inverse);
    for (int64_t i = 0; i < x.numel(); ++i) REQUIRE(back[i] == x[i]);
    CHECK_THROWS_AS(shuffle_patches(x, 4, {0, 1, 1, 3}), Error);
    CHECK_THROWS_AS(shuffle_patches(x, 3, id), Error);
    const std::vector<int64_t> p = random_permutation(16, gen);
    std::vector<int64_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < 16; ++i) CHECK(sorted[static_cast<size_t>(i)] == i);
  }
}

}  // namespace attn::data
