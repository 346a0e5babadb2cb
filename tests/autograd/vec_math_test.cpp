// kernels::vexp against std::exp, and softmax_row against the textbook formula.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/kernels/vec_math.h"

namespace attn {

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
}

}  // namespace attn
