// The Vision Transformer: the patch cut, shapes, the attention maps it returns, its parameter
// names, and permutation invariance without position embeddings.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/tape.h"
#include "data/images/shapes.h"
#include "nn/vision/vision_transformer.h"

namespace attn::nn {

namespace {

VisionTransformerOptions tiny_vit(bool positions = true) {
  VisionTransformerOptions o;
  o.image_size = 8, o.patch_size = 4, o.channels = 1, o.num_classes = 3;
  o.d_model = 8, o.nhead = 2, o.dim_feedforward = 16, o.num_layers = 2;
  o.position_embedding = positions;
  return o;
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("patchify cuts (B,C,H,W) into row-major patches flattened channel, row, column") {
    Generator gen(1);
    const int64_t b = 2, c = 3, h = 4, w = 6, p = 2, gw = w / p;
    const Tensor x = Tensor::randn({b, c, h, w}, gen);
    const Tensor y = patchify(Var::constant(x), p).value();
    REQUIRE(y.shape() == Shape{b, (h / p) * gw, c * p * p});
    // Where pixel (bi, ci, row, col) lands in the patches.
    auto patch_index = [&](int64_t bi, int64_t ci, int64_t row, int64_t col) {
      const int64_t n = row / p * gw + col / p;
      return (bi * (h / p) * gw + n) * c * p * p + (ci * p + row % p) * p + col % p;
    };
    // patchify is its own kind of transpose: the gradient of sum(patchify(x) * g) is g moved
    // back to the pixels.
    Var xv(x, true);
    const Tensor g = Tensor::randn(y.shape(), gen);
    sum(mul(patchify(xv, p), Var::constant(g))).backward();
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t row = 0; row < h; ++row)
          for (int64_t col = 0; col < w; ++col) {
            const int64_t pixel = ((bi * c + ci) * h + row) * w + col;
            REQUIRE(y[patch_index(bi, ci, row, col)] == x[pixel]);
            REQUIRE(xv.grad()[pixel] == g[patch_index(bi, ci, row, col)]);
          }
    CHECK_THROWS_AS(patchify(Var::constant(x), 4), Error);
  }

  TEST_CASE("VisionTransformer: logits, attention maps and parameter names") {
    Generator gen(3);
    VisionTransformer vit(tiny_vit(), gen);
    vit.eval();
    const Tensor img = Tensor::randn({5, 1, 8, 8}, gen);
    Tensor logits, logits_3d;
    {
      NoGrad off;
      logits = vit.forward(Var::constant(img)).value();
      logits_3d = vit.forward(Var::constant(img.reshape({5, 8, 8}))).value();
    }
    REQUIRE(logits.shape() == Shape{5, 3});
    CHECK(max_abs_diff(logits, logits_3d) == 0);  // (B,H,W) is (B,1,H,W)
    const std::vector<Tensor> a = vit.attention_weights();
    REQUIRE(a.size() == 2);
    for (const Tensor& w : a) {
      REQUIRE(w.shape() == Shape{5, 2, 5, 5});  // 1 [CLS] + 4 patches
      for (int64_t r = 0; r < 5 * 2 * 5; ++r) {
        double s = 0;
        for (int64_t k = 0; k < 5; ++k) s += w[r * 5 + k];
        CHECK(s == doctest::Approx(1).epsilon(1e-5));
      }
    }
    std::vector<std::string> names;
    for (const auto& [name, p] : vit.named_parameters()) names.push_back(name);
    CHECK(names.front() == "cls_token");
    CHECK(names[1] == "pos_embed");
    CHECK(names[2] == "patch_embed.weight");
    CHECK(std::find(names.begin(), names.end(), "layers.1.self_attn.in_proj_weight") !=
          names.end());
    CHECK(names[names.size() - 4] == "norm.weight");
    CHECK(names.back() == "head.bias");
    CHECK(vit.pos_embed.shape() == Shape{1, 5, 8});
    CHECK(vit.patch_embed->weight.shape() == Shape{8, 16});
    VisionTransformer bare(tiny_vit(false), gen);
    for (const auto& [name, p] : bare.named_parameters()) CHECK(name != "pos_embed");
    CHECK(bare.parameters().size() + 1 == vit.parameters().size());
    CHECK_THROWS_AS(vit.forward(Var::constant(Tensor::zeros({2, 1, 8, 4}))), Error);
    VisionTransformerOptions bad = tiny_vit();
    bad.patch_size = 3;
    CHECK_THROWS_AS(VisionTransformer(bad, gen), Error);
  }

  TEST_CASE("VisionTransformer: without positions shuffling the patches leaves the logits") {
    Generator gen(4);
    const Tensor img = Tensor::randn({3, 1, 8, 8}, gen);
    const Tensor shuffled = data::shuffle_patches(img, 4, {3, 0, 2, 1});
    for (bool positions : {false, true}) {
      Generator g(9);
      VisionTransformer vit(tiny_vit(positions), g);
      vit.eval();
      NoGrad off;
      const Tensor a = vit.forward(Var::constant(img)).value();
      const Tensor b = vit.forward(Var::constant(shuffled)).value();
      CAPTURE(positions);
      if (positions)
        CHECK(max_abs_diff(a, b) > 1e-3);  // positions tell the patches apart
      else
        CHECK(max_abs_diff(a, b) < 1e-5);  // a set of patches: only summation order changes
    }
  }

  TEST_CASE("VisionTransformer: one gradient step reaches every parameter and the pixels") {
    Generator gen(5);
    VisionTransformer vit(tiny_vit(), gen);
    Var img(Tensor::randn({4, 1, 8, 8}, gen), true);
    cross_entropy(vit.forward(img), Tensor::from_vector({0, 1, 2, 1})).backward();
    for (const auto& [name, p] : vit.named_parameters()) {
      CAPTURE(name);
      double norm = 0;
      for (int64_t i = 0; i < p.grad().numel(); ++i) norm += std::abs(p.grad()[i]);
      CHECK(norm > 0);
    }
    double pix = 0;
    for (int64_t i = 0; i < img.grad().numel(); ++i) pix += std::abs(img.grad()[i]);
    CHECK(pix > 0);
  }
}

}  // namespace attn::nn
