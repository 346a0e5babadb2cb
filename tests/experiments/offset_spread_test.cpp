// spread_by_offset (experiments/common/offset_spread.h): a Toeplitz matrix has no spread; one
// entry moved off its diagonal's value shows up as exactly its share of the deviation.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "experiments/common/offset_spread.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("offset spread: zero for s(i,j) = f(i - j); a changed entry is measured") {
    const int64_t n = 5;
    std::vector<double> s(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        s[i * n + j] = std::cos(0.7 * double(i - j)) + 0.1 * double(i - j);
    OffsetSpread r = spread_by_offset(s, n, false);
    CHECK(r.offsets.size() == 2 * n - 1);
    CHECK(r.offsets.front() == -(n - 1));
    CHECK(r.max_deviation < 1e-15);
    CHECK(r.means[n - 1] == doctest::Approx(1.0));  // offset 0: cos 0
    // Not symmetric in i - j, so grouping by |i - j| does spread.
    CHECK(spread_by_offset(s, n, true).max_deviation > 0.1);
    // Raise s(0,0) by 1: the offset-0 group (5 entries) has mean +0.2, that entry deviates 0.8.
    s[0] += 1;
    r = spread_by_offset(s, n, false);
    CHECK(r.max_deviation == doctest::Approx(0.8));
    CHECK(r.max_abs == doctest::Approx(2.0));
    CHECK_THROWS_AS(spread_by_offset(s, n + 1, false), Error);
  }
}

}  // namespace attn::experiments
