// kernels::vexp and verf against libm (in double), softmax_row and the GELU kernels against the
// textbook formulas.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/kernels/vec_math.h"
#include "autograd/real.h"

namespace attn {

namespace {

// The worst error of f against the double-precision reference over [-range, range), in units of
// the float spacing at the true value; also checks that f is exactly odd at every sample.
template <class F, class Ref>
double worst_ulp_of_odd(F f, Ref ref, float range, float step) {
  double worst = 0;
  for (float x = -range; x < range; x += step) {
    const double want = ref(static_cast<double>(x));
    const float got = f(x);
    const auto mag = static_cast<float>(std::abs(want));
    const double ulp = std::nextafter(mag, INFINITY) - mag;
    if (want != 0) worst = std::max(worst, std::abs(got - want) / ulp);
    CHECK(f(-x) == -got);
  }
  return worst;
}

}  // namespace

TEST_SUITE("autograd") {
  TEST_CASE("vexp is within 2 ulp of std::exp and exact at the edges") {
    double worst = 0;
    for (float x = -103.0f; x < 88.7f; x += 0.0137f) {
      const double want = std::exp(static_cast<double>(x));
      const float got = kernels::vexp(x);
      if (want < std::numeric_limits<float>::min()) continue;  // denormals: checked below
      worst = std::max(worst, std::abs(got - want) / want);
    }
    CHECK(worst < 2.5e-7);  // 2 ulp of float is 2.4e-7 relative
    CHECK(kernels::vexp(0.0f) == 1.0f);
    CHECK(kernels::vexp(-INFINITY) == 0.0f);
    CHECK(kernels::vexp(-200.0f) == 0.0f);
    CHECK(std::isinf(kernels::vexp(89.0f)));
    CHECK(std::isnan(kernels::vexp(NAN)));
    CHECK(kernels::vexp(-90.0f) > 0.0f);  // a denormal, not flushed to 0
  }

  TEST_CASE("softmax_row equals exp(x - max) / sum, and gives masked entries exactly 0") {
    const std::vector<float> x = {1.5f, -2.0f, 0.25f, -INFINITY, 3.0f, 0.0f, -1.0f, 2.0f, 0.5f};
    std::vector<float> y(x.size());
    kernels::softmax_row(x.data(), y.data(), static_cast<int64_t>(x.size()));
    double total = 0;
    for (float v : x) total += std::exp(static_cast<double>(v) - 3.0);
    for (size_t j = 0; j < x.size(); ++j) {
      const double want = std::exp(static_cast<double>(x[j]) - 3.0) / total;
      CHECK(std::abs(y[j] - want) <= 1e-7 + 1e-6 * want);
    }
    CHECK(y[3] == 0.0f);
  }

  TEST_CASE("softmax_row is right at every row length, short rows (registers) and long") {
    // Lengths 1..140 cross the short-row path (<= 128, whole vectors plus a partial one) and
    // the generic loops; every third entry is -inf (a masked score: weight exactly 0). y has a
    // guard value after the row, which must survive.
    for (int64_t c = 1; c <= 140; ++c) {
      std::vector<float> x(c), y(c + 8, 42.0f);
      for (int64_t j = 0; j < c; ++j)
        x[j] = j % 3 == 2 ? -INFINITY : static_cast<float>((j * 37 % 11) - 5) * 0.7f;
      kernels::softmax_row(x.data(), y.data(), c);
      double m = -INFINITY, total = 0;
      for (float v : x) m = std::max(m, static_cast<double>(v));
      for (float v : x) total += std::exp(v - m);
      for (int64_t j = 0; j < c; ++j) {
        const double want = std::exp(x[j] - m) / total;
        CHECK(std::abs(y[j] - want) <= 1e-7 + 1e-6 * want);
        if (x[j] == -INFINITY) CHECK(y[j] == 0.0f);
      }
      for (int64_t j = c; j < c + 8; ++j) CHECK(y[j] == 42.0f);
    }
    // A row with every entry masked has no defined softmax: NaN, as PyTorch gives.
    for (int64_t c : {5, 8, 13, 100}) {
      std::vector<float> x(c, -INFINITY), y(c);
      kernels::softmax_row(x.data(), y.data(), c);
      for (float v : y) CHECK(std::isnan(v));
    }
  }

  TEST_CASE("softmax_prefix_row: softmax of the seen values, exact zeros up to the row's end") {
    // Row lengths that are and are not whole vectors, every seen count up to the row: the
    // whole-vector path (the padding lanes inside the row), the exact path (a row of 33 seen
    // 33), the generic one past 128; nothing after the row's end is written.
    for (int64_t cols : {8, 33, 64, 128, 150}) {
      for (int64_t seen = 0; seen <= cols; ++seen) {
        std::vector<float> row(cols + 8, 42.0f);
        for (int64_t j = 0; j < cols; ++j) row[j] = static_cast<float>((j * 29 % 13) - 6) * 0.6f;
        const std::vector<float> x(row.begin(), row.begin() + cols);
        kernels::softmax_prefix_row(row.data(), seen, cols);
        double m = -INFINITY, total = 0;
        for (int64_t j = 0; j < seen; ++j) m = std::max(m, static_cast<double>(x[j]));
        for (int64_t j = 0; j < seen; ++j) total += std::exp(x[j] - m);
        for (int64_t j = 0; j < seen; ++j) {
          const double want = std::exp(x[j] - m) / total;
          CHECK(std::abs(row[j] - want) <= 1e-7 + 1e-6 * want);
        }
        for (int64_t j = seen; j < cols; ++j) CHECK(row[j] == 0.0f);
        for (int64_t j = cols; j < cols + 8; ++j) CHECK(row[j] == 42.0f);
      }
    }
  }

  TEST_CASE("verf is within 1.5 ulp of erf and odd, saturating and NaN-preserving") {
    CHECK(worst_ulp_of_odd([](float x) { return kernels::verf(x); },
                           [](double x) { return std::erf(x); }, 5.0f, 0.000731f) < 1.5);
    CHECK(kernels::verf(0.0f) == 0.0f);
    CHECK(std::abs(kernels::verf(1e-20f) - 1.1283791671e-20) <= 2e-27);  // erf(x) ~ 2x / sqrt(pi)
    CHECK(kernels::verf(9.0f) == 1.0f);
    CHECK(kernels::verf(-INFINITY) == -1.0f);
    CHECK(std::isnan(kernels::verf(NAN)));
  }

  TEST_CASE("vtanh is within 3 ulp of tanh, odd, saturating and NaN-preserving") {
    CHECK(worst_ulp_of_odd([](float x) { return kernels::vtanh(x); },
                           [](double x) { return std::tanh(x); }, 12.0f, 0.000917f) < 3.0);
    CHECK(kernels::vtanh(0.0f) == 0.0f);
    CHECK(kernels::vtanh(1e-20f) == 1e-20f);
    CHECK(kernels::vtanh(100.0f) == 1.0f);
    CHECK(kernels::vtanh(-INFINITY) == -1.0f);
    CHECK(std::isnan(kernels::vtanh(NAN)));
  }

  TEST_CASE("the GELU kernels equal x Phi(x) and its derivative, both forms") {
    std::vector<real> x, dy;
    for (int i = -400; i <= 400; ++i) {
      x.push_back(static_cast<real>(i * 0.0213));
      dy.push_back(static_cast<real>(1 + (i % 7) * 0.25));
    }
    // Around 0, where the backward switches from y / x to the series, and far in the tails.
    for (const double v : {1e-5, -1e-5, 9.9e-5, -1.01e-4, 3e-4, -3e-4, -12.0, -30.0, 12.0}) {
      x.push_back(static_cast<real>(v));
      dy.push_back(1.5);
    }
    // The AVX2 loops take erf's far branch per vector of 8 only when a lane needs it: the
    // values in order make whole vectors near, whole vectors far and mixed ones at the edges;
    // a shuffled copy mixes nearly every vector. A value's result must not depend on its
    // neighbours (exactly, forward; the backward's near-only exp is a polynomial).
    const int64_t n = static_cast<int64_t>(x.size());
    std::vector<int64_t> order(n);
    for (int64_t i = 0; i < n; ++i) order[i] = (i * 389) % n;  // n = 810 and 389 are coprime
    std::vector<real> xs(n), dys(n), ys(n), dxs(n);
    for (int64_t i = 0; i < n; ++i) xs[i] = x[order[i]], dys[i] = dy[order[i]];
    std::vector<real> y(x.size()), dx(x.size());
    // gelu_with_slope_n (gelu_linear's forward): GELU and its derivative in one pass.
    std::vector<real> yw(n), slope(n), yws(n), slopes(n);
    for (bool tanh_form : {false, true}) {
      kernels::gelu_with_slope_n(x.data(), yw.data(), slope.data(), n, tanh_form);
      kernels::gelu_with_slope_n(xs.data(), yws.data(), slopes.data(), n, tanh_form);
      kernels::gelu_n(xs.data(), ys.data(), n, tanh_form);
      kernels::gelu_backward_n(xs.data(), ys.data(), dys.data(), dxs.data(), n, tanh_form);
      kernels::gelu_n(x.data(), y.data(), n, tanh_form);
      kernels::gelu_backward_n(x.data(), y.data(), dy.data(), dx.data(), n, tanh_form);
      for (int64_t i = 0; i < n; ++i) {
        const double v = x[i];
        const double u = std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v);
        const double cdf = tanh_form ? 0.5 * (1 + std::tanh(u)) : 0.5 * (1 + std::erf(v / M_SQRT2));
        const double dcdf = tanh_form ? 0.5 * (1 - std::tanh(u) * std::tanh(u)) *
                                            std::sqrt(2 / M_PI) * (1 + 3 * 0.044715 * v * v)
                                      : std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
        CHECK(std::abs(y[i] - v * cdf) <= 1e-6 * (1 + std::abs(v)));
        CHECK(std::abs(dx[i] - dy[i] * (cdf + v * dcdf)) <= 1e-6 * (1 + std::abs(dy[i] * v)));
        CHECK(std::abs(yw[i] - v * cdf) <= 1e-6 * (1 + std::abs(v)));
        CHECK(std::abs(slope[i] - (cdf + v * dcdf)) <= 1e-6 * (1 + std::abs(v)));
        // The exact form to within 2 units of float rounding (measured: 0.9 and 1.0), which
        // a polynomial coefficient off in its 6th digit breaks.
        const double eps = std::numeric_limits<float>::epsilon();
        if (!tanh_form) {
          CHECK(std::abs(yw[i] - v * cdf) <= 2 * eps * std::max(1.0, std::abs(v)));
          CHECK(std::abs(slope[i] - (cdf + v * dcdf)) <= 2 * eps);
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        CHECK(ys[i] == y[order[i]]);
        CHECK(std::abs(dxs[i] - dx[order[i]]) <= 4e-7 * (1 + std::abs(dx[order[i]])));
        CHECK(std::abs(yws[i] - yw[order[i]]) <= 4e-7 * (1 + std::abs(yw[order[i]])));
        CHECK(std::abs(slopes[i] - slope[order[i]]) <= 4e-7 * (1 + std::abs(slope[order[i]])));
      }
    }
  }
}

}  // namespace attn
