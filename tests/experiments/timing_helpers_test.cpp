// The helpers the timing experiments read their curves with: log-log slopes and crossings, the
// interleaved timer, and the scoped thread count.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "autograd/kernels/parallel.h"
#include "experiments/common/interleaved_timing.h"
#include "experiments/common/loglog.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("log_log_slope recovers the exponent of a power law, from a given x on") {
    std::vector<double> xs{16, 64, 256, 1024}, cubic, kinked;
    for (double x : xs) {
      cubic.push_back(0.5 * x * x * x);
      kinked.push_back(x < 100 ? 7.0 : 0.01 * x * x);  // flat, then quadratic
    }
    CHECK(log_log_slope(xs, cubic) == doctest::Approx(3.0).epsilon(1e-12));
    CHECK(log_log_slope(xs, kinked, 256) == doctest::Approx(2.0).epsilon(1e-12));
    // Non-finite and non-positive points are skipped; fewer than two points give NaN.
    CHECK(log_log_slope(xs, {1, NAN, 16, -1}) == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(std::isnan(log_log_slope(xs, cubic, 1000)));
  }

  TEST_CASE("log_log_crossing interpolates where a ratio passes 1 on log axes") {
    // ratio = x / 100 crosses 1 at x = 100, between 64 and 256.
    std::vector<double> xs{16, 64, 256, 1024}, rising, falling;
    for (double x : xs) {
      rising.push_back(x / 100);
      falling.push_back(100 / x);
    }
    CHECK(log_log_crossing(xs, rising) == doctest::Approx(100.0).epsilon(1e-12));
    CHECK(std::isnan(log_log_crossing(xs, falling)));  // never rises through 1
    CHECK(log_log_crossing(xs, falling, /*falling=*/true) == doctest::Approx(100.0).epsilon(1e-12));
    CHECK(std::isnan(log_log_crossing(xs, {2, 3, 4, 5})));
  }

  TEST_CASE("time_interleaved runs every piece of work once per round, in turn") {
    std::vector<int> order;
    const std::vector<Timing> t =
        time_interleaved({[&] { order.push_back(0); }, [&] { order.push_back(1); }}, 4);
    REQUIRE(t.size() == 2);
    CHECK(order == std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1, 0, 1});  // 1 warm-up + 4 rounds
    for (const Timing& x : t) CHECK((x.min_s <= x.median_s && x.median_s <= x.max_s));
    // A budget smaller than one round cuts the rounds to 3 (never fewer, never more than reps).
    order.clear();
    time_interleaved({[&] {
                       order.push_back(0);
                       volatile double s = 0;
                       for (int i = 0; i < 200000; ++i) s = s + i;
                     }},
                     10, 1e-9);
    CHECK(order.size() == 1 + 3);
  }

  TEST_CASE("ScopedThreads restores the thread count") {
    const int before = num_threads();
    {
      ScopedThreads one(1);
      CHECK(num_threads() == 1);
    }
    CHECK(num_threads() == before);
    {
      ScopedThreads keep;  // 0: unchanged
      CHECK(num_threads() == before);
    }
    CHECK(num_threads() == before);
  }
}

}  // namespace attn::experiments
