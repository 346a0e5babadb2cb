// Positions: the sinusoidal formula, learned tables, RoPE's rotation properties (and that the
// fused op equals its composition of primitives), ALiBi's slopes and biases.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/positional/alibi.h"
#include "nn/positional/learned.h"
#include "nn/positional/rope.h"
#include "nn/positional/sinusoidal.h"

namespace attn::nn {

namespace {

// Dot product of rows a[...,i,:] and b[...,j,:] of two (T,D) tensors.
double row_dot(const Tensor& a, int64_t i, const Tensor& b, int64_t j) {
  const int64_t d = a.shape().back();
  double s = 0;
  for (int64_t c = 0; c < d; ++c) s += double(a[i * d + c]) * double(b[j * d + c]);
  return s;
}

// Rotate-half RoPE from primitives: x * cos + concat(-x2, x1) * sin.
Var rope_composed(const Var& x, int64_t start) {
  const int64_t t = x.size(-2), d = x.shape().back(), h = d / 2;
  Tensor c({t, d}), s({t, d});
  for (int64_t p = 0; p < t; ++p)
    for (int64_t i = 0; i < h; ++i) {
      const double theta = double(start + p) * std::pow(10000.0, -2.0 * i / d);
      c[p * d + i] = c[p * d + i + h] = real(std::cos(theta));
      s[p * d + i] = s[p * d + i + h] = real(std::sin(theta));
    }
  const int axis = x.rank() - 1;
  Var swapped = concat({neg(slice(x, axis, h, d)), slice(x, axis, 0, h)}, axis);
  return add(mul(x, Var::constant(c)), mul(swapped, Var::constant(s)));
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("sinusoidal table follows the 2017 formula") {
    const int64_t len = 50, d = 16;
    const Tensor pe = sinusoidal_table(len, d);
    CHECK(pe.shape() == Shape{len, d});
    for (int64_t pos : {0, 1, 7, 49})
      for (int64_t i = 0; i < d / 2; ++i) {
        const double freq = 1.0 / std::pow(10000.0, 2.0 * i / d);
        CHECK(pe.at({pos, 2 * i}) == doctest::Approx(std::sin(pos * freq)).epsilon(1e-6));
        CHECK(pe.at({pos, 2 * i + 1}) == doctest::Approx(std::cos(pos * freq)).epsilon(1e-6));
      }
    CHECK(pe.at({0, 0}) == 0);  // sin(0)
    CHECK(pe.at({0, 1}) == 1);  // cos(0)
  }

  TEST_CASE("sinusoidal module adds the table rows of the given positions; table is a buffer") {
    SinusoidalPositionalEncoding pos(20, 8);
    CHECK(pos.named_parameters().empty());
    CHECK(pos.state_dict().count("pe") == 1);
    Var x = Var::constant(Tensor::zeros({2, 3, 8}));
    Var y = pos.forward(x, 5);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t t = 0; t < 3; ++t)
        for (int64_t c = 0; c < 8; ++c)
          CHECK(y.value().at({b, t, c}) == pos.table().at({5 + t, c}));
    CHECK_THROWS_AS(pos.forward(x, 18), Error);
  }

  TEST_CASE("learned positions: weight rows are added, gradient reaches only the rows used") {
    Generator gen(3);
    LearnedPositionalEmbedding pos(10, 4, gen);
    REQUIRE(pos.named_parameters().size() == 1);
    CHECK(pos.named_parameters()[0].first == "weight");
    Var x = Var::parameter(Tensor::randn({2, 3, 4}, gen));
    Var y = pos.forward(x, 2);
    CHECK(y.value().at({1, 2, 3}) ==
          doctest::Approx(x.value().at({1, 2, 3}) + pos.weight.value().at({4, 3})));
    sum(y).backward();
    for (int64_t p = 0; p < 10; ++p)
      CHECK(pos.weight.grad().at({p, 0}) == (p >= 2 && p < 5 ? 2 : 0));  // batch of 2
    CHECK_THROWS_AS(pos.forward(x, 8), Error);
  }

  TEST_CASE("RoPE preserves every row's norm, in both styles") {
    Generator gen(11);
    const Tensor x = Tensor::randn({2, 3, 7, 8}, gen);
    for (RopeStyle style : {RopeStyle::kRotateHalf, RopeStyle::kInterleaved}) {
      const Tensor y = apply_rope(Var::constant(x), 4, style).value();
      for (int64_t r = 0; r < 2 * 3 * 7; ++r)
        CHECK(row_dot(y, r, y, r) == doctest::Approx(row_dot(x, r, x, r)).epsilon(1e-5));
      CHECK(max_abs_diff(y, x) > 0.1);  // it did rotate
    }
  }

  TEST_CASE("RoPE scores depend only on the relative position") {
    Generator gen(5);
    const int64_t d = 8;
    // The same query vector and key vector placed at every position 0..T-1.
    const Tensor q1 = Tensor::randn({1, d}, gen), k1 = Tensor::randn({1, d}, gen);
    const int64_t t = 9;
    Tensor q({t, d}), k({t, d});
    for (int64_t p = 0; p < t; ++p)
      for (int64_t c = 0; c < d; ++c) q[p * d + c] = q1[c], k[p * d + c] = k1[c];
    for (RopeStyle style : {RopeStyle::kRotateHalf, RopeStyle::kInterleaved}) {
      const Tensor rq = apply_rope(Var::constant(q), 0, style).value();
      const Tensor rk = apply_rope(Var::constant(k), 0, style).value();
      // (i, j) and (i + s, j + s) give the same score; different offsets give different ones.
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 4; ++j)
          for (int64_t s = 1; s < 5; ++s)
            CHECK(row_dot(rq, i + s, rk, j + s) ==
                  doctest::Approx(row_dot(rq, i, rk, j)).epsilon(1e-4));
      CHECK(std::abs(row_dot(rq, 3, rk, 1) - row_dot(rq, 1, rk, 3)) > 1e-3);
      // start_pos shifts positions: rows of rope(x, 0) from 2 on == rope(x[2:], start_pos 2).
      const Tensor tail = apply_rope(slice(Var::constant(q), 0, 2, t), 2, style).value();
      CHECK(max_abs_diff(tail, slice(Var::constant(rq), 0, 2, t).value()) < 1e-6);
    }
  }

  TEST_CASE("fused RoPE equals its composition of primitives, values and gradients") {
    Generator gen(8);
    const Tensor x0 = Tensor::randn({2, 2, 5, 6}, gen), gy = Tensor::randn({2, 2, 5, 6}, gen);
    Var a = Var::parameter(x0.clone()), b = Var::parameter(x0.clone());
    Var ya = apply_rope(a, 3, RopeStyle::kRotateHalf);
    ya.backward(gy);  // (backward clears the tape, so one graph at a time)
    Var yb = rope_composed(b, 3);
    yb.backward(gy);
    // Each output is x_i cos + x_partner sin (the gradient likewise with gy), rounded in float
    // along two routes, the fused one with its own cos/sin table: a few float eps times
    // |x_i| + |x_partner| apart at most. Bounded by the largest |x| (or |gy|): 8 eps of it.
    auto largest = [](const Tensor& t) {
      double m = 0;
      for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, double(std::abs(t[i])));
      return m;
    };
    const double eps = std::numeric_limits<real>::epsilon();
    CHECK(max_abs_diff(ya.value(), yb.value()) <= 8 * eps * largest(x0));
    CHECK(max_abs_diff(a.grad(), b.grad()) <= 8 * eps * largest(gy));
  }

  TEST_CASE("interleaved RoPE is rotate-half RoPE on de-interleaved channels") {
    Generator gen(9);
    const int64_t d = 6, h = d / 2;
    const Tensor x = Tensor::randn({4, d}, gen);
    Tensor xp({4, d});  // channels (0,2,4 | 1,3,5): pair i becomes (i, i+h)
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t i = 0; i < h; ++i)
        xp[r * d + i] = x[r * d + 2 * i], xp[r * d + h + i] = x[r * d + 2 * i + 1];
    const Tensor yi = apply_rope(Var::constant(x), 1, RopeStyle::kInterleaved).value();
    const Tensor yh = apply_rope(Var::constant(xp), 1, RopeStyle::kRotateHalf).value();
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t i = 0; i < h; ++i) {
        CHECK(yi[r * d + 2 * i] == doctest::Approx(yh[r * d + i]));
        CHECK(yi[r * d + 2 * i + 1] == doctest::Approx(yh[r * d + h + i]));
      }
    CHECK_THROWS_AS(apply_rope(Var::constant(Tensor::zeros({2, 5})), 0, RopeStyle::kRotateHalf),
                    Error);
  }

  TEST_CASE("ALiBi slopes: 8 heads give 1/2 .. 1/256; other counts follow the paper's rule") {
    const std::vector<double> s8 = alibi_slopes(8);
    REQUIRE(s8.size() == 8);
    for (int h = 0; h < 8; ++h) CHECK(s8[h] == doctest::Approx(std::pow(2.0, -(h + 1))));
    // 12 heads: the 8-head slopes, then every other slope of the 16-head sequence (2^-0.5 ...).
    const std::vector<double> s12 = alibi_slopes(12);
    REQUIRE(s12.size() == 12);
    for (int h = 0; h < 8; ++h) CHECK(s12[h] == doctest::Approx(s8[h]));
    for (int h = 0; h < 4; ++h) CHECK(s12[8 + h] == doctest::Approx(std::pow(2.0, -0.5 - h)));
    const std::vector<double> s1 = alibi_slopes(1);
    CHECK(s1[0] == doctest::Approx(1.0 / 256));
  }

  TEST_CASE("ALiBi bias is -slope * distance, queries aligned to the last keys") {
    const Tensor b = alibi_bias(4, 3, 5);  // 3 queries at positions 2,3,4 of 5 keys
    CHECK(b.shape() == Shape{1, 4, 3, 5});
    const std::vector<double> s = alibi_slopes(4);
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 5; ++j)
          CHECK(b.at({0, h, i, j}) == doctest::Approx(-s[h] * std::abs(2 + i - j)));
    CHECK(b.at({0, 0, 2, 4}) == 0);  // a query on itself
  }
}

}  // namespace attn::nn
