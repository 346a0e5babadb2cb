// The vocabulary heads: adaptive softmax and hierarchical (Huffman) softmax give distributions
// (every row of exp(log_prob) sums to 1), their losses equal -mean log p(target) read from
// log_prob, PyTorch's hidden sizes and parameter names, the Huffman tree's depths (a known tree
// and the [H, H + 1) bound), and the errors a student meets.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/mode.h"
#include "nn/softmax_heads/adaptive_softmax.h"
#include "nn/softmax_heads/huffman_softmax.h"

namespace attn::nn {

namespace {

// max over rows of |sum_j exp(logp[r, j]) - 1|, and |loss + mean_r logp[r, t_r]|.
struct HeadCheck {
  double worst_sum = 0, loss_gap = 0;
};

HeadCheck check_head(const Tensor& logp, const Tensor& targets, double loss) {
  HeadCheck c;
  const int64_t n = logp.shape()[0], v = logp.shape()[1];
  double mean = 0;
  for (int64_t r = 0; r < n; ++r) {
    double s = 0;
    for (int64_t j = 0; j < v; ++j) s += std::exp(static_cast<double>(logp[r * v + j]));
    c.worst_sum = std::max(c.worst_sum, std::abs(s - 1));
    mean += static_cast<double>(logp[r * v + static_cast<int64_t>(targets[r])]) / n;
  }
  c.loss_gap = std::abs(loss + mean);
  return c;
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("AdaptiveLogSoftmax: a distribution per row, its loss is -mean log p(target)") {
    Generator gen(5);
    AdaptiveLogSoftmax m(8, 20, {5, 12}, gen, 2.0);
    const auto names = m.named_parameters();
    REQUIRE(names.size() == 5);
    CHECK(names[0].first == "head.weight");
    CHECK(names[0].second.value().shape() == Shape{7, 8});  // 5 shortlist + 2 clusters
    CHECK(names[1].first == "tail.0.0.weight");
    CHECK(names[1].second.value().shape() == Shape{4, 8});  // 8 / 2
    CHECK(names[4].second.value().shape() == Shape{8, 2});  // cluster [12, 20), 8 / 4 dims
    NoGrad off;
    const Tensor x = Tensor::randn({6, 8}, gen), t = Tensor::from_vector({0, 6, 13, 3, 19, 8});
    const HeadCheck c = check_head(m.log_prob(Var(x)).value(), t,
                                   static_cast<double>(m.loss(Var(x), t).value().item()));
    CHECK(c.worst_sum < 1e-5);
    CHECK(c.loss_gap < 1e-5);
  }

  TEST_CASE("AdaptiveLogSoftmax: bad cutoffs, too small projections and bad targets are errors") {
    Generator gen(1);
    CHECK_THROWS_AS(AdaptiveLogSoftmax(8, 20, {12, 5}, gen), Error);
    CHECK_THROWS_AS(AdaptiveLogSoftmax(8, 20, {5, 20}, gen), Error);
    CHECK_THROWS_AS(AdaptiveLogSoftmax(4, 20, {5, 10, 15}, gen, 4.0), Error);  // 4 / 16 < 1
    AdaptiveLogSoftmax m(8, 20, {5}, gen);
    CHECK_THROWS_AS(m.loss(Var(Tensor::zeros({2, 8})), Tensor::from_vector({0, 20})), Error);
  }

  TEST_CASE("HuffmanSoftmax: depths of a known tree, a distribution per row, loss = -mean log p") {
    Generator gen(2);
    // counts 8, 4, 2, 1, 1 give the tree ((((3,4),2),1),0): depths 1, 2, 3, 4, 4
    HuffmanSoftmax m(6, {8, 4, 2, 1, 1}, gen);
    const std::vector<int64_t> want = {1, 2, 3, 4, 4};
    for (int64_t k = 0; k < 5; ++k) CHECK(m.depth(k) == want[static_cast<size_t>(k)]);
    CHECK(m.weight.value().shape() == Shape{4, 6});
    NoGrad off;
    const Tensor x = Tensor::randn({5, 6}, gen), t = Tensor::from_vector({0, 4, 2, 3, 1});
    const HeadCheck c = check_head(m.log_prob(Var(x)).value(), t,
                                   static_cast<double>(m.loss(Var(x), t).value().item()));
    CHECK(c.worst_sum < 1e-5);
    CHECK(c.loss_gap < 1e-5);
    CHECK_THROWS_AS(HuffmanSoftmax(6, {1}, gen), Error);
    CHECK_THROWS_AS(HuffmanSoftmax(6, {1, 0}, gen), Error);
    CHECK_THROWS_AS(m.loss(Var(x), Tensor::from_vector({0, 1, 2, 3, 5})), Error);
  }

  TEST_CASE("HuffmanSoftmax: average depth within [H, H + 1) bits on a Zipf law") {
    Generator gen(0);
    std::vector<double> p;
    double total = 0;
    for (int k = 1; k <= 300; ++k) total += 1.0 / k;
    for (int k = 1; k <= 300; ++k) p.push_back(1.0 / k / total);
    HuffmanSoftmax m(2, p, gen);
    double h = 0, depth = 0;
    for (size_t k = 0; k < p.size(); ++k) {
      h -= p[k] * std::log2(p[k]);
      depth += p[k] * static_cast<double>(m.depth(static_cast<int64_t>(k)));
    }
    CHECK(depth >= h);
    CHECK(depth < h + 1);
  }
}

}  // namespace attn::nn
