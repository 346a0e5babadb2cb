// Metrics: token accuracy and exact match skip ignored targets; perplexity = exp(mean NLL).
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/error.h"
#include "data/tokenizer.h"
#include "train/metrics.h"

namespace attn::train {

TEST_SUITE("train") {
  TEST_CASE("token accuracy, exact match and perplexity") {
    constexpr real I = static_cast<real>(data::kIgnoreIndex);
    const Tensor target = Tensor::from_vector({2, 3}, {1, 2, I, 3, 3, 3});
    const Tensor pred = Tensor::from_vector({2, 3}, {1, 2, 9, 3, 0, 3});
    SeqMetrics m;
    m.add(pred, target);
    CHECK(m.tokens() == 5);
    CHECK(m.token_accuracy() == doctest::Approx(4.0 / 5));
    CHECK(m.exact_match() == doctest::Approx(0.5));  // row 0 right (the ignored slot is free)
    m.add_nll(2 * std::log(4.0), 2);
    CHECK(m.perplexity() == doctest::Approx(4.0));
    CHECK(m.summary().at("loss") == doctest::Approx(std::log(4.0)));
    CHECK_THROWS_WITH_AS(m.add(pred, Tensor::zeros({3})), doctest::Contains("differ in shape"),
                         Error);
  }

  TEST_CASE("generated sequences: missing or extra tokens are wrong") {
    SeqMetrics m;
    m.add_sequences({{1, 2, 3}, {1, 2}, {1, 2, 3, 4}}, {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}});
    CHECK(m.token_accuracy() == doctest::Approx(8.0 / 9));
    CHECK(m.exact_match() == doctest::Approx(1.0 / 3));
    CHECK_THROWS_AS(m.perplexity(), Error);
  }

  TEST_CASE("argmax over the last axis takes the first maximum") {
    const Tensor logits = Tensor::from_vector({2, 1, 3}, {0, 5, 5, -1, -2, -0.5f});
    CHECK(argmax_last(logits).shape() == Shape{2, 1});
    CHECK(argmax_last(logits).to_vector() == std::vector<real>{1, 2});
  }
}

}  // namespace attn::train
