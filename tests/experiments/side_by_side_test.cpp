// kit::side_by_side (experiments/kit/side_by_side.h): every job runs once and its result lands
// in job order; a job runs on one thread and computes the same bits as outside; nesting, one
// thread and a failing job behave as the header says.
#include <doctest/doctest.h>

#include <omp.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/functional.h"
#include "autograd/generator.h"
#include "autograd/kernels/parallel.h"
#include "autograd/tensor.h"
#include "experiments/kit/side_by_side.h"

namespace attn::experiments {

namespace {

// Restores the thread count a test changed.
struct ThreadsRestorer {
  int before = num_threads();
  ~ThreadsRestorer() { set_num_threads(before); }
};

// A small training-like computation whose ops are large enough to split across threads outside
// a job: sum(softmax(x W)^2), and its gradient with respect to W. Returned as raw bits.
std::vector<float> work(uint64_t seed) {
  Generator gen(seed);
  const Var x(Tensor::randn({256, 128}, gen));
  Var w = Var::parameter(Tensor::randn({128, 256}, gen));
  sum(mul(softmax(matmul(x, w)), softmax(matmul(x, w)))).backward();
  const Tensor& g = w.grad();
  std::vector<float> bits(static_cast<size_t>(g.numel()));
  for (int64_t i = 0; i < g.numel(); ++i) bits[static_cast<size_t>(i)] = static_cast<float>(g[i]);
  return bits;
}

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("side_by_side: each job once, results in job order, one thread inside a job") {
    const ThreadsRestorer restore;
    set_num_threads(2);
    CHECK(kit::side_by_side_width(7) == 2);
    CHECK(kit::side_by_side_width(1) == 1);
    std::vector<std::atomic<int>> calls(7);
    const std::vector<std::string> out = kit::side_by_side(7, [&](size_t i) {
      ++calls[i];
      CHECK(kit::in_side_by_side_job());
      CHECK(omp_get_max_threads() == 1);
      CHECK(kit::side_by_side_width(3) == 1);  // nested: one after the other
      return std::to_string(i * i);
    });
    for (size_t i = 0; i < 7; ++i) {
      CHECK(calls[i] == 1);
      CHECK(out[i] == std::to_string(i * i));
    }
    CHECK_FALSE(kit::in_side_by_side_job());
    CHECK(num_threads() == 2);  // the caller's own count is back
  }

  TEST_CASE("side_by_side: a job computes the same bits as the same work outside") {
    const ThreadsRestorer restore;
    set_num_threads(2);
    const std::vector<std::vector<float>> inside =
        kit::side_by_side(4, [](size_t i) { return work(100 + i); });
    for (size_t i = 0; i < 4; ++i) {
      const std::vector<float> outside = work(100 + i);
      REQUIRE(outside.size() == inside[i].size());
      CHECK(std::memcmp(outside.data(), inside[i].data(), outside.size() * sizeof(float)) == 0);
    }
  }

  TEST_CASE("side_by_side: one thread runs the jobs in order on the caller") {
    const ThreadsRestorer restore;
    set_num_threads(1);
    CHECK(kit::side_by_side_width(5) == 1);
    std::vector<size_t> order;
    kit::run_side_by_side(5, [&](size_t i) {
      CHECK_FALSE(kit::in_side_by_side_job());
      order.push_back(i);
    });
    CHECK(order == std::vector<size_t>{0, 1, 2, 3, 4});
  }

  TEST_CASE("side_by_side: the lowest failing job's error is rethrown after the others end") {
    const ThreadsRestorer restore;
    for (const int threads : {1, 2}) {
      set_num_threads(threads);
      std::atomic<int> finished{0};
      auto job = [&](size_t i) {
        if (i == 1 || i == 3) throw std::runtime_error("job " + std::to_string(i));
        ++finished;
      };
      CHECK_THROWS_WITH_AS(kit::run_side_by_side(6, job), "job 1", std::runtime_error);
      CHECK(finished >= 1);  // job 0 ran; jobs after a failure may be skipped
      CHECK_FALSE(kit::in_side_by_side_job());
      CHECK(num_threads() == threads);
    }
  }
}

}  // namespace attn::experiments
