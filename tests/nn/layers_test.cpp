// Single layers: initialisation ranges, rank-agnostic Linear, padding rows, reproducible dropout.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/init.h"
#include "nn/linear.h"
#include "nn/norms.h"

namespace attn::nn {

TEST_SUITE("nn") {
  TEST_CASE("Linear initialisation follows nn.Linear: both bounds are 1/sqrt(in_features)") {
    Generator gen(3);
    Linear fc(64, 32, true, gen);
    const double bound = 1.0 / std::sqrt(64.0);
    double wmax = 0, bmax = 0;
    for (int64_t i = 0; i < fc.weight.numel(); ++i)
      wmax = std::max(wmax, std::abs(double(fc.weight.value()[i])));
    for (int64_t i = 0; i < fc.bias.numel(); ++i)
      bmax = std::max(bmax, std::abs(double(fc.bias.value()[i])));
    CHECK(wmax <= bound);
    CHECK(wmax > 0.9 * bound);  // 2048 draws reach close to the edge
    CHECK(bmax <= bound);
    CHECK(fc.named_parameters()[0].first == "weight");
    CHECK(fc.weight.shape() == Shape{32, 64});
  }

  TEST_CASE("xavier_uniform_ bound is sqrt(6/(fan_in+fan_out))") {
    Generator gen(1);
    Tensor w = Tensor::empty({30, 10});
    init::xavier_uniform_(w, gen);
    double m = 0;
    for (int64_t i = 0; i < w.numel(); ++i) m = std::max(m, std::abs(double(w[i])));
    CHECK(m <= std::sqrt(6.0 / 40.0));
    CHECK(m > 0.9 * std::sqrt(6.0 / 40.0));
  }

  TEST_CASE("Linear on a (B,T,C) input equals Linear applied to every row") {
    Generator gen(5);
    Linear fc(4, 3, true, gen);
    Tensor x = Tensor::randn({2, 3, 4}, gen);
    Var y = fc.forward(Var::constant(x));
    for (int64_t r = 0; r < 6; ++r) {
      Tensor row = Tensor::from_vector({4}, {x[r * 4], x[r * 4 + 1], x[r * 4 + 2], x[r * 4 + 3]});
      Var yr = fc.forward(Var::constant(row));
      for (int64_t j = 0; j < 3; ++j) CHECK(yr.value()[j] == doctest::Approx(y.value()[r * 3 + j]));
    }
  }

  TEST_CASE("Embedding padding_idx: zero at init, looked up as stored, never gets a gradient") {
    Generator gen(2);
    Embedding emb(6, 3, gen, 1);
    for (int64_t c = 0; c < 3; ++c) CHECK(emb.weight.value().at({1, c}) == 0);
    emb.weight.value().at({1, 0}) = 2;  // a loaded non-zero padding row
    Tensor ids = Tensor::from_vector({2, 2}, {1, 4, 4, 1});
    Var y = emb.forward(ids);
    CHECK(y.value().at({0, 0, 0}) == 2);
    sum(y).backward();
    for (int64_t c = 0; c < 3; ++c) {
      CHECK(emb.weight.grad().at({1, c}) == 0);
      CHECK(emb.weight.grad().at({4, c}) == 2);  // used twice
      CHECK(emb.weight.grad().at({0, c}) == 0);  // not used
    }
  }

  TEST_CASE("Dropout: identity in eval; restoring the generator state replays the same mask") {
    auto rng = std::make_shared<Generator>(11);
    Dropout drop(0.5, rng);
    Generator gen(0);
    Var x = Var::constant(Tensor::randn({4, 8}, gen));
    const std::string saved = rng->state();
    Tensor a = drop.forward(x).value().clone();
    Tensor b = drop.forward(x).value().clone();
    CHECK(max_abs_diff(a, b) > 0);  // the generator moved on
    rng->set_state(saved);
    CHECK(max_abs_diff(a, drop.forward(x).value()) == 0);
    drop.eval();
    CHECK(drop.forward(x).same_node(x));
    CHECK_THROWS_AS(Dropout(0.1, nullptr), Error);
  }

  TEST_CASE("LayerNorm and RMSNorm normalise the last axis") {
    Generator gen(4);
    Var x = Var::constant(Tensor::randn({3, 8}, gen, 3.0));
    LayerNorm ln(8);
    RMSNorm rms(8);
    Tensor y = ln.forward(x).value(), z = rms.forward(x).value();
    for (int64_t r = 0; r < 3; ++r) {
      double mean = 0, sq = 0, zsq = 0;
      for (int64_t c = 0; c < 8; ++c) mean += y[r * 8 + c] / 8.0;
      for (int64_t c = 0; c < 8; ++c) sq += (y[r * 8 + c] - mean) * (y[r * 8 + c] - mean) / 8.0;
      for (int64_t c = 0; c < 8; ++c) zsq += z[r * 8 + c] * z[r * 8 + c] / 8.0;
      CHECK(mean == doctest::Approx(0).epsilon(1e-5).scale(1));
      CHECK(sq == doctest::Approx(1).epsilon(1e-3));
      CHECK(zsq == doctest::Approx(1).epsilon(1e-3));
    }
    CHECK_THROWS_AS(ln.forward(Var::constant(Tensor::zeros({2, 7}))), Error);
  }
}

}  // namespace attn::nn
