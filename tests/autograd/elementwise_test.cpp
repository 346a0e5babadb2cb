// Elementwise ops: broadcasting results and gradients, shape errors, and every function's value
// and derivative at points worked out by hand (the numbers come from the closed forms, e.g.
// gelu(1) = Phi(1) = 0.841344746..., evaluated in double precision outside attnlab).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "tests/autograd/check_close.h"

namespace attn {

using test::check_close;

namespace {

Var param(const Shape& shape, const std::vector<real>& values) {
  return Var::parameter(Tensor::from_vector(shape, values));
}

}  // namespace

TEST_SUITE("autograd") {
  TEST_CASE("sub and div broadcast b (3) against a (2,3) and sum b's gradient over rows") {
    Var a = param({2, 3}, {1, 2, 3, 4, 5, 6});
    Var b = param({3}, {1, 2, 4});

    Var d = sub(a, b);
    check_close(d.value(), {2, 3}, {0, 0, -1, 3, 3, 2});
    sum(d).backward();
    check_close(a.grad(), {2, 3}, {1, 1, 1, 1, 1, 1});
    check_close(b.grad(), {3}, {-2, -2, -2});  // -1 from each of the two rows

    a.zero_grad(), b.zero_grad();
    Var q = div(a, b);
    check_close(q.value(), {2, 3}, {1, 1, 0.75, 4, 2.5, 1.5});
    sum(q).backward();
    check_close(a.grad(), {2, 3}, {1, 0.5, 0.25, 1, 0.5, 0.25});  // 1/b
    // -sum_rows(a) / b^2 = -(1+4)/1, -(2+5)/4, -(3+6)/16
    check_close(b.grad(), {3}, {-5, -1.75, -0.5625});
  }

  TEST_CASE("mul broadcasts a column (2,1) against a row (1,3) into (2,3)") {
    Var a = param({2, 1}, {2, 3});
    Var b = param({1, 3}, {1, 10, 100});
    Var y = mul(a, b);
    check_close(y.value(), {2, 3}, {2, 20, 200, 3, 30, 300});
    sum(y).backward();
    check_close(a.grad(), {2, 1}, {111, 111});  // each a_i meets every b_j
    check_close(b.grad(), {1, 3}, {5, 5, 5});   // each b_j meets every a_i
  }

  TEST_CASE("a rank-0 operand broadcasts everywhere and collects the whole gradient") {
    Var s = param({}, {2});
    Var x = param({2, 2}, {1, 2, 3, 4});
    Var y = div(x, s);
    check_close(y.value(), {2, 2}, {0.5, 1, 1.5, 2});
    sum(y).backward();
    check_close(s.grad(), {}, {-10.0 / 4});  // -sum(x) / s^2
  }

  TEST_CASE("incompatible shapes are errors naming the op and both shapes") {
    Var a = Var::constant(Tensor::ones({2, 3}));
    Var b = Var::constant(Tensor::ones({4}));
    const char* expected[] = {"sub: shapes (2,3) and (4) cannot be broadcast together",
                              "mul: shapes (2,3) and (4) cannot be broadcast together",
                              "div: shapes (2,3) and (4) cannot be broadcast together"};
    CHECK_THROWS_WITH_AS(sub(a, b), doctest::Contains(expected[0]), Error);
    CHECK_THROWS_WITH_AS(mul(a, b), doctest::Contains(expected[1]), Error);
    CHECK_THROWS_WITH_AS(div(a, b), doctest::Contains(expected[2]), Error);
    CHECK_THROWS_WITH_AS(a - Var::constant(Tensor::ones({3, 3})),
                         doctest::Contains("sub: shapes (2,3) and (3,3)"), Error);
  }

  TEST_CASE("scalar ops and operators") {
    Var x = param({3}, {-1, 0, 2});
    Var y = (x + real(0.5)) * real(-1.5) + real(2) * x - (-x);  // = -1.5x - 0.75 + 2x + x
    check_close(y.value(), {3}, {-2.25, -0.75, 2.25});
    sum(y).backward();
    check_close(x.grad(), {3}, {1.5, 1.5, 1.5});
  }

  TEST_CASE("each function matches its hand-computed value and derivative") {
    struct Point {
      const char* name;
      std::function<Var(const Var&)> f;
      double x, y, dydx;
    };
    const Point points[] = {
        {"exp", [](const Var& v) { return exp(v); }, 1, 2.718281828459045, 2.718281828459045},
        {"log", [](const Var& v) { return log(v); }, 2, 0.6931471805599453, 0.5},
        {"sqrt", [](const Var& v) { return sqrt(v); }, 4, 2, 0.25},
        {"pow 3", [](const Var& v) { return pow(v, 3); }, 2, 8, 12},
        {"pow 0.5", [](const Var& v) { return pow(v, 0.5); }, 4, 2, 0.25},
        {"pow -1.5", [](const Var& v) { return pow(v, -1.5); }, 4, 0.125, -0.046875},
        {"abs", [](const Var& v) { return abs(v); }, -1.5, 1.5, -1},
        {"tanh", [](const Var& v) { return tanh(v); }, 0.5, 0.46211715726000974,
         0.7864477329659274},
        {"sigmoid", [](const Var& v) { return sigmoid(v); }, 2, 0.8807970779778823,
         0.10499358540350662},
        {"relu -", [](const Var& v) { return relu(v); }, -1, 0, 0},
        {"relu +", [](const Var& v) { return relu(v); }, 2, 2, 1},
        // gelu: Phi(x) + x phi(x) for the derivative of x Phi(x)
        {"gelu 1", [](const Var& v) { return gelu(v); }, 1, 0.8413447460685429, 1.0833154705876864},
        {"gelu -0.5", [](const Var& v) { return gelu(v); }, -0.5, -0.15426876936299344,
         0.13250487534383712},
        {"gelu tanh 1", [](const Var& v) { return gelu(v, GeluApprox::kTanh); }, 1,
         0.8411919906082768, 1.082964083846},
        {"gelu tanh -0.5", [](const Var& v) { return gelu(v, GeluApprox::kTanh); }, -0.5,
         -0.15428599017485606, 0.132630096465},
        {"silu 1", [](const Var& v) { return silu(v); }, 1, 0.7310585786300049, 0.9276705118714869},
        {"silu -2", [](const Var& v) { return silu(v); }, -2, -0.2384058440442351,
         -0.09078424878489547},
        {"elu -1", [](const Var& v) { return elu(v, 0.5); }, -1, -0.31606027941427883,
         0.18393972058572117},
        {"elu 2", [](const Var& v) { return elu(v, 0.5); }, 2, 2, 1},
        {"neg", [](const Var& v) { return neg(v); }, 3, -3, -1},
    };
    for (const Point& p : points) {
      INFO(p.name, " at x = ", p.x);
      Var x = Var::parameter(Tensor::scalar(real(p.x)));
      Var y = p.f(x);
      CHECK(y.item() == doctest::Approx(p.y));
      y.backward();
      CHECK(x.grad().item() == doctest::Approx(p.dydx));
    }
  }

  TEST_CASE("kinks take PyTorch's one-sided choices") {
    Var x = param({1}, {0});
    auto grad_at_zero = [&](const std::function<Var(const Var&)>& f) {
      x.zero_grad();
      sum(f(x)).backward();
      return double(x.grad()[0]);
    };
    CHECK(grad_at_zero([](const Var& v) { return relu(v); }) == 0);
    CHECK(grad_at_zero([](const Var& v) { return abs(v); }) == 0);
    CHECK(grad_at_zero([](const Var& v) { return elu(v, 0.5); }) == doctest::Approx(0.5));
    // x^0 is constant: gradient 0 even at x = 0, where p x^(p-1) would be 0 * inf.
    CHECK(grad_at_zero([](const Var& v) { return pow(v, 0); }) == 0);
  }

  TEST_CASE("sigmoid and silu stay finite and exact in their saturated tails") {
    Var x = param({4}, {-1000, -90, 90, 1000});
    Var s = sigmoid(x);
    CHECK(s.value()[0] == 0);
    CHECK(s.value()[1] >= 0);
    CHECK(s.value()[1] < 1e-38);
    CHECK(s.value()[2] == 1);
    CHECK(s.value()[3] == 1);
    sum(s).backward();
    for (int i = 0; i < 4; ++i) CHECK(x.grad()[i] == doctest::Approx(0));

    x.zero_grad();
    Var y = silu(x);
    CHECK(y.value()[0] == 0);
    CHECK(y.value()[3] == 1000);
    sum(y).backward();
    CHECK(x.grad()[0] == doctest::Approx(0));
    CHECK(x.grad()[3] == doctest::Approx(1));
  }

  TEST_CASE("the tanh form of gelu stays within 1e-3 of the exact form") {
    Var x = Var::constant(Tensor::from_vector({81}, [] {
      std::vector<real> v;
      for (int i = -40; i <= 40; ++i) v.push_back(real(i) / 8);  // [-5, 5]
      return v;
    }()));
    const Tensor exact = gelu(x).value();
    const Tensor approx = gelu(x, GeluApprox::kTanh).value();
    const double diff = max_abs_diff(exact, approx);
    CHECK(diff > 0);     // they are different functions ...
    CHECK(diff < 1e-3);  // ... that agree closely (the largest gap is about 5e-4)
  }
}

}  // namespace attn
