// Shape and selection ops: exact values and gradients on small hand-checked tensors, storage
// sharing, dropout's mask, and the error messages a student sees for bad shapes, axes and ids.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn {

namespace {

// 0, 1, 2, ... in the given shape: every element's value is its flat index, which makes
// where an element moved to obvious.
Var iota(const Shape& shape) {
  Tensor t = Tensor::arange(numel(shape)).reshape(shape);
  return Var::parameter(t);
}

void check_values(const Tensor& t, const Shape& shape, const std::vector<real>& expected) {
  REQUIRE(t.shape() == shape);
  REQUIRE(t.numel() == static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    INFO("flat index ", i);
    CHECK(t[i] == expected[i]);
  }
}

// Backward from y with upstream gradient 100 + flat index, so each input gradient shows which
// output element it came from.
void backward_with_positions(const Var& y) {
  Tensor gy = Tensor::arange(y.numel()).reshape(y.shape());
  for (int64_t i = 0; i < gy.numel(); ++i) gy[i] += 100;
  y.backward(gy);
}

}  // namespace

TEST_SUITE("autograd") {
  TEST_CASE("reshape shares storage and reshapes the gradient back") {
    Var x = iota({2, 3});
    Var y = reshape(x, {3, -1});
    CHECK(y.shape() == Shape{3, 2});
    CHECK(y.value().shares_storage(x.value()));
    backward_with_positions(y);
    check_values(x.grad(), {2, 3}, {100, 101, 102, 103, 104, 105});
    CHECK_THROWS_WITH_AS(reshape(x, {4, -1}), doctest::Contains("(2,3)"), Error);
  }

  TEST_CASE("transpose swaps the last two axes of every batch entry") {
    Var x = iota({2, 2, 3});
    Var y = transpose(x);
    check_values(y.value(), {2, 3, 2}, {0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11});
    CHECK_FALSE(y.value().shares_storage(x.value()));
    backward_with_positions(y);
    // dx[b,i,j] = gy[b,j,i]: gy (2,3,2) is 100.. in order, so read it transposed.
    check_values(x.grad(), {2, 2, 3}, {100, 102, 104, 101, 103, 105, 106, 108, 110, 107, 109, 111});
  }

  TEST_CASE("permute moves axes and its gradient uses the inverse permutation") {
    Var x = iota({2, 3, 4});
    Var y = permute(x, {2, 0, 1});  // y[k,i,j] = x[i,j,k]
    REQUIRE(y.shape() == Shape{4, 2, 3});
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 4; ++k) CHECK(y.value().at({k, i, j}) == x.value().at({i, j, k}));
    backward_with_positions(y);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 4; ++k) CHECK(x.grad().at({i, j, k}) == 100 + (k * 2 + i) * 3 + j);
  }

  TEST_CASE("concat joins along an axis and routes each block of the gradient back") {
    Var a = iota({2, 2});
    Var b = Var::parameter(Tensor::from_vector({2, 1}, {10, 20}));
    Var y = concat({a, b}, -1);
    check_values(y.value(), {2, 3}, {0, 1, 10, 2, 3, 20});
    backward_with_positions(y);
    check_values(a.grad(), {2, 2}, {100, 101, 103, 104});
    check_values(b.grad(), {2, 1}, {102, 105});
  }

  TEST_CASE("a tensor concatenated with itself receives both gradient blocks") {
    Var a = iota({3});
    Var y = concat({a, a}, 0);
    check_values(y.value(), {6}, {0, 1, 2, 0, 1, 2});
    backward_with_positions(y);
    check_values(a.grad(), {3}, {100 + 103, 101 + 104, 102 + 105});
  }

  TEST_CASE("stack inserts a new axis at the front, middle or end") {
    Var a = iota({2, 2});
    Var b = Var::parameter(Tensor::from_vector({2, 2}, {10, 11, 12, 13}));
    check_values(stack({a, b}, 0).value(), {2, 2, 2}, {0, 1, 2, 3, 10, 11, 12, 13});
    check_values(stack({a, b}, 1).value(), {2, 2, 2}, {0, 1, 10, 11, 2, 3, 12, 13});
    Var y = stack({a, b}, -1);
    check_values(y.value(), {2, 2, 2}, {0, 10, 1, 11, 2, 12, 3, 13});
    backward_with_positions(y);
    check_values(a.grad(), {2, 2}, {100, 102, 104, 106});
    check_values(b.grad(), {2, 2}, {101, 103, 105, 107});
  }

  TEST_CASE("slice keeps [start, end) of one axis; negative bounds count from the end") {
    Var x = iota({2, 4});
    Var y = slice(x, 1, 1, 3);
    check_values(y.value(), {2, 2}, {1, 2, 5, 6});
    backward_with_positions(y);
    check_values(x.grad(), {2, 4}, {0, 100, 101, 0, 0, 102, 103, 0});
    check_values(slice(x, -1, -3, -1).value(), {2, 2}, {1, 2, 5, 6});
    check_values(slice(x, 0, 1, 2).value(), {1, 4}, {4, 5, 6, 7});
    CHECK(slice(x, 1, 2, 2).shape() == Shape{2, 0});  // an empty range is allowed
    tape().clear();
  }

  TEST_CASE("where picks a or b by a broadcast condition and splits the gradient the same way") {
    Var a = iota({2, 3});
    Var b = Var::parameter(Tensor::from_vector({3}, {-1, -2, -3}));
    const Tensor cond = Tensor::from_vector({2, 1}, {1, 0});  // row 0 from a, row 1 from b
    Var y = where(cond, a, b);
    check_values(y.value(), {2, 3}, {0, 1, 2, -1, -2, -3});
    backward_with_positions(y);
    check_values(a.grad(), {2, 3}, {100, 101, 102, 0, 0, 0});
    check_values(b.grad(), {3}, {103, 104, 105});
  }

  TEST_CASE("masked_fill writes the value where the mask is set and blocks the gradient there") {
    Var x = iota({2, 2, 2});
    const Tensor causal = Tensor::from_vector({2, 2}, {0, 1, 0, 0});  // broadcast over axis 0
    Var y = masked_fill(x, causal, -1e9);
    check_values(y.value(), {2, 2, 2}, {0, -1e9, 2, 3, 4, -1e9, 6, 7});
    backward_with_positions(y);
    check_values(x.grad(), {2, 2, 2}, {100, 0, 102, 103, 104, 0, 106, 107});
  }

  TEST_CASE("embedding looks up rows and scatter-adds the gradient of repeated ids") {
    Var w = iota({4, 2});
    const Tensor ids = Tensor::from_vector({3}, {2, 0, 2});
    Var y = embedding(w, ids);
    check_values(y.value(), {3, 2}, {4, 5, 0, 1, 4, 5});
    backward_with_positions(y);
    check_values(w.grad(), {4, 2}, {102, 103, 0, 0, 100 + 104, 101 + 105, 0, 0});
  }

  TEST_CASE(
      "dropout keeps about 1-p of the elements, scales them by 1/(1-p), and backward uses "
      "the same mask") {
    const int64_t n = 20000;
    const real p = 0.3;
    Var x = Var::parameter(Tensor::ones({n}));
    Generator gen(5);
    Var y = dropout(x, p, gen, true);
    const real scale = 1 / (1 - p);
    int64_t kept = 0, other_values = 0;
    for (int64_t i = 0; i < n; ++i) {
      kept += y.value()[i] == scale;
      other_values += y.value()[i] != scale && y.value()[i] != 0;
    }
    CHECK(other_values == 0);  // every element is either dropped or scaled by exactly 1/(1-p)
    // The kept count is Binomial(n, 0.7): mean 14000, standard deviation ~65; allow 5 sigma.
    CHECK(std::abs(double(kept) - 0.7 * n) < 5 * std::sqrt(n * 0.7 * 0.3));
    Tensor gy = Tensor::arange(n);
    y.backward(gy);
    int64_t wrong_grads = 0;  // x = 1, so y is the mask itself and dx must be gy * y
    for (int64_t i = 0; i < n; ++i) wrong_grads += x.grad()[i] != gy[i] * y.value()[i];
    CHECK(wrong_grads == 0);

    Generator same(5), other(6);
    NoGrad off;
    const Tensor again = dropout(x, p, same, true).value();
    CHECK(max_abs_diff(again, y.value()) == 0);  // same seed, same mask
    CHECK(max_abs_diff(dropout(x, p, other, true).value(), y.value()) > 0);
  }

  TEST_CASE("dropout is the identity in eval mode or with p = 0, and p = 1 drops everything") {
    Var x = iota({3});
    Generator gen(1);
    CHECK(dropout(x, 0.5, gen, false).same_node(x));
    CHECK(dropout(x, 0, gen, true).same_node(x));
    Generator fresh(1);
    CHECK(gen.next_u64() == fresh.next_u64());  // neither call drew random numbers
    check_values(dropout(x, 1, gen, true).value(), {3}, {0, 0, 0});
    tape().clear();
  }

  TEST_CASE("shape op errors name the op, the shapes and the offending axis or index") {
    Var x = iota({2, 3});
    Var v = iota({4});
    CHECK_THROWS_WITH_AS(transpose(v), doctest::Contains("transpose: needs rank >= 2"), Error);
    CHECK_THROWS_WITH_AS(transpose(v), doctest::Contains("(4)"), Error);
    CHECK_THROWS_WITH_AS(permute(x, {0}), doctest::Contains("permute: dims (0) has 1 entries"),
                         Error);
    CHECK_THROWS_WITH_AS(permute(x, {0, 0}), doctest::Contains("repeats axis 0"), Error);
    CHECK_THROWS_WITH_AS(permute(x, {0, 2}), doctest::Contains("permute: axis 2 is out of range"),
                         Error);
    CHECK_THROWS_WITH_AS(concat({x, v}, 0),
                         doctest::Contains("concat: tensor 1 has shape (4) but tensor 0 has shape "
                                           "(2,3)"),
                         Error);
    CHECK_THROWS_WITH_AS(concat({x, iota({2, 2})}, 0), doctest::Contains("along axis 0"), Error);
    CHECK_THROWS_WITH_AS(concat({x, x}, 2), doctest::Contains("concat: axis 2 is out of range"),
                         Error);
    CHECK_THROWS_WITH_AS(concat({}, 0), doctest::Contains("concat: needs at least one"), Error);
    CHECK_THROWS_WITH_AS(stack({x, v}, 0), doctest::Contains("stack: tensor 1 has shape (4)"),
                         Error);
    CHECK_THROWS_WITH_AS(stack({x, x}, 3),
                         doctest::Contains("stack: axis 3 is out of range for stacking tensors of "
                                           "shape (2,3) (valid: -3..2)"),
                         Error);
    CHECK_THROWS_WITH_AS(slice(x, 2, 0, 1), doctest::Contains("slice: axis 2 is out of range"),
                         Error);
    CHECK_THROWS_WITH_AS(slice(x, 1, 1, 4),
                         doctest::Contains("slice: range [1, 4) is out of bounds for axis 1 of "
                                           "extent 3 (x (2,3))"),
                         Error);
    CHECK_THROWS_WITH_AS(where(Tensor::ones({4}), x, x),
                         doctest::Contains("where: shapes (4) and (2,3)"), Error);
    CHECK_THROWS_WITH_AS(masked_fill(v, Tensor::ones({2, 4}), 0),
                         doctest::Contains("masked_fill: mask (2,4) must broadcast to x (4)"),
                         Error);
  }

  TEST_CASE("embedding and dropout errors say which value is wrong") {
    Var w = iota({5, 2});
    CHECK_THROWS_WITH_AS(embedding(w, Tensor::from_vector({3}, {1, 7, 2})),
                         doctest::Contains("embedding: index 7 at flat position 1 of indices (3) "
                                           "is out of range for a vocabulary of 5"),
                         Error);
    CHECK_THROWS_WITH_AS(embedding(w, Tensor::from_vector({1}, {-1})),
                         doctest::Contains("index -1"), Error);
    CHECK_THROWS_WITH_AS(embedding(w, Tensor::from_vector({1}, {1.5})),
                         doctest::Contains("index 1.5"), Error);
    CHECK_THROWS_WITH_AS(embedding(iota({5}), Tensor::zeros({1})),
                         doctest::Contains("embedding: weight must be (V,C) (rank 2), got (5)"),
                         Error);
    CHECK_THROWS_WITH_AS(embedding(w, Tensor::zeros({1, 1, 1, 1})),
                         doctest::Contains("at most rank 3"), Error);
    Generator gen(0);
    CHECK_THROWS_WITH_AS(dropout(w, 1.5, gen),
                         doctest::Contains("dropout: p must be a probability "
                                           "in [0, 1], got 1.5"),
                         Error);
    CHECK_THROWS_WITH_AS(dropout(w, -0.1, gen), doctest::Contains("got -0.1"), Error);
    CHECK_THROWS_WITH_AS(dropout(w, std::nan(""), gen), doctest::Contains("dropout: p"), Error);
    tape().clear();
  }
}

}  // namespace attn
