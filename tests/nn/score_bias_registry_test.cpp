// The open registry of positional score biases (nn/positional/score_bias_registry.h): names,
// tables, and a registered row inside DecoderOnlyTransformer. ALiBi written as a row must give
// the model with positions = alibi exactly, in a full forward and in cached decoding.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/positional/alibi.h"
#include "nn/positional/score_bias_registry.h"
#include "nn/transformer/decoder_only.h"

namespace attn::nn {

namespace {

// ALiBi as a registry row: -slope_h |i - j|, with ALiBi's own slopes (nn/positional/alibi.cpp).
ScoreBiasRow alibi_row(const std::string& name) {
  return {.name = name,
          .source = "test",
          .idea = "alibi as a row",
          .bias = [](int64_t h, int64_t nhead, int64_t i, int64_t j) {
            return -alibi_slopes(nhead)[static_cast<size_t>(h)] * std::llabs(i - j);
          }};
}

std::string refusal(ScoreBiasRegistry& r, ScoreBiasRow row) {
  try {
    r.add(std::move(row));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

DecoderOnlyOptions tiny(PositionKind k, const std::string& score_bias) {
  DecoderOnlyOptions o;
  o.vocab_size = 11, o.max_len = 16, o.d_model = 8, o.nhead = 2, o.num_layers = 2;
  o.dim_feedforward = 16, o.dropout = 0, o.positions = k, o.score_bias = score_bias;
  return o;
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("score bias registry: plain names, no built-in scheme's, no repeats ignoring case") {
    ScoreBiasRegistry r;
    r.add(alibi_row("my-bias"));
    CHECK(r.find("my-bias") != nullptr);
    CHECK(r.find("MY-BIAS") == nullptr);  // find is exact; add compares ignoring case
    CHECK(refusal(r, alibi_row("My-Bias")).find("is taken (score bias 'my-bias', built in)") !=
          std::string::npos);
    CHECK(refusal(r, alibi_row("ALiBi")).find("built-in positional scheme 'alibi'") !=
          std::string::npos);
    CHECK(refusal(r, alibi_row("two words")).find("only letters") != std::string::npos);
    CHECK(refusal(r, alibi_row(std::string("nul\0x", 5))).find("nul\\x00x") != std::string::npos);
    ScoreBiasRow no_function = alibi_row("empty");
    no_function.bias = nullptr;
    CHECK(refusal(r, no_function).find("has no bias function") != std::string::npos);
    CHECK(r.rows().size() == 1);
  }

  TEST_CASE("score bias table: (1, H, tq, tk), the queries the last tq positions; NaN refused") {
    const ScoreBiasRow row = alibi_row("t");
    const Tensor full = score_bias_table(row, 2, 5, 5, /*causal=*/false);
    const Tensor step = score_bias_table(row, 2, 2, 5, /*causal=*/false);
    CHECK(full.shape() == Shape{1, 2, 5, 5});
    CHECK(step.shape() == Shape{1, 2, 2, 5});
    const Tensor table = alibi_bias(2, 5, 5);  // ALiBi's own table
    CHECK(max_abs_diff(full, table) == 0);
    for (int64_t h = 0; h < 2; ++h)  // a decoding step's rows are the full table's last rows
      for (int64_t q = 0; q < 2; ++q)
        for (int64_t k = 0; k < 5; ++k) CHECK(step.at({0, h, q, k}) == full.at({0, h, 3 + q, k}));
    ScoreBiasRow bad = row;
    bad.bias = [](int64_t, int64_t, int64_t i, int64_t j) {
      return i - j == 3 ? std::numeric_limits<double>::quiet_NaN() : 0.0;
    };
    CHECK_THROWS_WITH_AS(score_bias_table(bad, 2, 5, 5),
                         doctest::Contains("score bias 't': b(head 0, query 3, key 0)"), Error);
    // Causal: the keys after each query are never asked for (a log(1 + i - j) is NaN there).
    bad.bias = [](int64_t, int64_t, int64_t i, int64_t j) { return -std::log1p(double(i - j)); };
    const Tensor causal = score_bias_table(bad, 2, 5, 5);
    CHECK(causal.at({0, 1, 1, 4}) == 0);
    CHECK(causal.at({0, 1, 4, 1}) == doctest::Approx(-std::log1p(3.0)));
    CHECK_THROWS_AS(score_bias_table(bad, 2, 5, 5, /*causal=*/false), Error);
  }

  TEST_CASE("a registered row in DecoderOnlyTransformer equals the built-in scheme it writes") {
    if (!score_bias_registry().find("alibi-as-row"))
      score_bias_registry().add(alibi_row("alibi-as-row"));
    Generator g1(5), g2(5);
    DecoderOnlyTransformer builtin(tiny(PositionKind::kAlibi, ""), g1);
    DecoderOnlyTransformer row(tiny(PositionKind::kNone, "alibi-as-row"), g2);
    builtin.eval(), row.eval();
    NoGrad off;
    const Tensor ids = Tensor::from_vector({2, 6}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2});
    CHECK(max_abs_diff(builtin.forward(ids).value(), row.forward(ids).value()) == 0);
    // Cached decoding: the bias of a step covers its query over all cached keys.
    const Tensor prompt = Tensor::from_vector({1, 3}, {4, 2, 7});
    SamplingOptions greedy;
    Generator s1(1), s2(1);
    const Tensor a = builtin.generate(prompt, 8, greedy, s1);
    const Tensor b = row.generate(prompt, 8, greedy, s2);
    const Tensor c = row.generate(prompt, 8, greedy, s2, std::nullopt, /*use_cache=*/false);
    CHECK(max_abs_diff(a, b) == 0);
    CHECK(max_abs_diff(b, c) == 0);
    // Without the row the model has no positions: a different function of the same weights.
    Generator g3(5);
    DecoderOnlyTransformer none(tiny(PositionKind::kNone, ""), g3);
    none.eval();
    CHECK(max_abs_diff(none.forward(ids).value(), row.forward(ids).value()) > 1e-4);
  }

  TEST_CASE("an unknown score_bias is refused naming it") {
    Generator gen(1);
    CHECK_THROWS_WITH_AS(DecoderOnlyTransformer(tiny(PositionKind::kNone, "nope"), gen),
                         doctest::Contains("score_bias 'nope' is not a registered score bias"),
                         UsageError);
  }
}

}  // namespace attn::nn
