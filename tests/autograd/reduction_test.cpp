// Reductions: values over every axis position, keepdim, negative axes, gradients, the axis
// error message, and which element max() credits when values tie.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "tests/autograd/check_close.h"

namespace attn {

using test::check_close;

namespace {

// x (2,3) = [[1, 2, 3], [4, 5, 6]]
Var two_by_three() {
  return Var::parameter(Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6}));
}

}  // namespace

TEST_SUITE("autograd") {
  TEST_CASE("sum and mean over each axis, with and without keepdim") {
    NoGrad off;  // values only
    Var x = two_by_three();
    check_close(sum(x).value(), {}, {21});
    check_close(sum(x, 0).value(), {3}, {5, 7, 9});
    check_close(sum(x, -1, true).value(), {2, 1}, {6, 15});
    check_close(mean(x).value(), {}, {3.5});
    check_close(mean(x, 1).value(), {2}, {2, 5});
    check_close(mean(x, -2, true).value(), {1, 3}, {2.5, 3.5, 4.5});
    check_close(max(x).value(), {}, {6});
    check_close(max(x, 0).value(), {3}, {4, 5, 6});
    check_close(max(x, -1, true).value(), {2, 1}, {3, 6});
    // A middle axis of a rank-3 tensor: (2,2,2) of 0..7, reducing axis 1 pairs k and k+2.
    Var z = Var::constant(Tensor::arange(8).reshape({2, 2, 2}));
    check_close(sum(z, 1).value(), {2, 2}, {2, 4, 10, 12});
    check_close(max(z, 1, true).value(), {2, 1, 2}, {2, 3, 6, 7});
    // A last axis longer than the 8-wide blocks of the row kernel, with a remainder of 3.
    Var w = Var::constant(Tensor::arange(38).reshape({2, 19}));
    check_close(sum(w, -1).value(), {2}, {171, 532});  // 0+..+18, 19+..+37
    check_close(mean(w, 1, true).value(), {2, 1}, {9, 28});
    check_close(max(w, 1).value(), {2}, {18, 37});
    // A rank-0 tensor reduces over its single (virtual) axis to itself, as in PyTorch.
    Var s = Var::constant(Tensor::scalar(7));
    check_close(mean(s, 0).value(), {}, {7});
  }

  TEST_CASE("mean spreads the upstream gradient evenly over what it averaged") {
    Var x = two_by_three();
    mean(x).backward();
    check_close(x.grad(), {2, 3}, {1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6, 1.0 / 6});
    x.zero_grad();
    mean(x, 0, true).backward(Tensor::from_vector({1, 3}, {1, 2, 3}));
    check_close(x.grad(), {2, 3}, {0.5, 1, 1.5, 0.5, 1, 1.5});
    x.zero_grad();
    sum(x, 1).backward(Tensor::from_vector({2}, {2, -1}));
    check_close(x.grad(), {2, 3}, {2, 2, 2, -1, -1, -1});
  }

  TEST_CASE("an axis out of range is an error naming the op, the axis and the valid range") {
    Var x = two_by_three();
    CHECK_THROWS_WITH_AS(
        sum(x, 2),
        doctest::Contains("sum: axis 2 is out of range for a tensor of rank 2 (valid: -2..1)"),
        Error);
    CHECK_THROWS_WITH_AS(mean(x, -3), doctest::Contains("mean: axis -3 is out of range"), Error);
    CHECK_THROWS_WITH_AS(max(x, 5, true), doctest::Contains("max: axis 5 is out of range"), Error);
  }

  TEST_CASE("max sends the whole gradient to the first of tied maxima") {
    Var x = Var::parameter(Tensor::from_vector({4}, {1, 3, 3, 2}));
    Var m = max(x);
    CHECK(m.item() == 3);
    m.backward();
    check_close(x.grad(), {4}, {0, 1, 0, 0});

    // Per row, as PyTorch's x.max(dim=1): row 0 ties at columns 0 and 2, row 1 at 1 and 2.
    Var y = Var::parameter(Tensor::from_vector({2, 3}, {5, 1, 5, 0, 2, 2}));
    Var r = max(y, 1);
    check_close(r.value(), {2}, {5, 2});
    r.backward(Tensor::from_vector({2}, {10, 20}));
    check_close(y.grad(), {2, 3}, {10, 0, 0, 0, 20, 0});
  }

  TEST_CASE("max over an axis routes each gradient to its own argmax") {
    // x (2,3): column maxima are in rows 1, 0, 1.
    Var x = Var::parameter(Tensor::from_vector({2, 3}, {1, 9, 3, 4, 2, 6}));
    Var m = max(x, 0, true);
    check_close(m.value(), {1, 3}, {4, 9, 6});
    m.backward(Tensor::from_vector({1, 3}, {1, 2, 3}));
    check_close(x.grad(), {2, 3}, {0, 2, 0, 1, 0, 3});
  }

  TEST_CASE("max propagates NaN and rejects an empty axis") {
    NoGrad off;
    const real nan = std::numeric_limits<real>::quiet_NaN();
    Var x = Var::constant(Tensor::from_vector({2, 3}, {1, nan, 2, 4, 5, 6}));
#ifdef ATTN_CHECK_FINITE  // Debug builds stop at the first non-finite output instead
    CHECK_THROWS_WITH_AS(max(x, 1), doctest::Contains("max: non-finite output"), Error);
#else
    const Tensor rows = max(x, 1).value();
    CHECK(std::isnan(rows[0]));
    CHECK(rows[1] == 6);
    CHECK(std::isnan(max(x).item()));
#endif
    Var empty = Var::constant(Tensor::zeros({2, 0}));
    CHECK_THROWS_WITH_AS(max(empty, 1),
                         doctest::Contains("max: cannot take the maximum over axis 1 of extent 0"),
                         Error);
    CHECK_THROWS_WITH_AS(
        max(empty),
        doctest::Contains("max: cannot take the maximum of an empty tensor of shape (2,0)"), Error);
  }
}

}  // namespace attn
