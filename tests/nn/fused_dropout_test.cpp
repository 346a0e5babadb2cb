// The fused ops with dropout inside (autograd/ops/fused/fused_dropout.h) against the ops they
// replace, with the same generator state on both sides: gelu_linear against gelu -> dropout ->
// matmul + add, and the layers that take them in the fast path (a GELU feed-forward, multi-head
// self-attention) against the reference path. Outputs, every gradient and the generator's next
// draw must agree; fused_attention's op-level comparison is in fused_attention_test.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "autograd/mode.h"
#include "autograd/ops/fused/fused_dropout.h"
#include "nn/attention/multihead_attention.h"
#include "nn/dropout.h"
#include "nn/feedforward.h"
#include "nn/linear.h"
#include "tests/nn/run_with_grads.h"

namespace attn::nn {

namespace {

// max |a - b| / max(1, max |b|): the products' rounding, which grows with their length.
double relative_gap(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  double scale = 1;
  for (int64_t i = 0; i < b.numel(); ++i) scale = std::max(scale, std::abs(double(b[i])));
  return max_abs_diff(a, b) / scale;
}

void check_same(const test::Grads& a, const test::Grads& b) {
  CHECK(relative_gap(a.y, b.y) < 2e-6);
  REQUIRE(a.d.size() == b.d.size());
  for (size_t i = 0; i < a.d.size(); ++i) {
    CAPTURE(i);
    CHECK(relative_gap(a.d[i], b.d[i]) < 2e-6);
  }
}

struct ThreadsRestorer {
  int before = num_threads();
  ~ThreadsRestorer() { set_num_threads(before); }
};

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("gelu_linear with dropout equals gelu -> dropout -> matmul + add, mask and gradients") {
    ThreadsRestorer restore;
    Generator gen(5);
    // 4 * 33 * 40 = 5280 hidden values: several 1024-value chunks, the last one ragged.
    const Tensor x = Tensor::randn({4, 33, 40}, gen), w = Tensor::randn({24, 40}, gen),
                 b = Tensor::randn({24}, gen), gy = Tensor::randn({4, 33, 24}, gen);
    for (const GeluApprox approx : {GeluApprox::kNone, GeluApprox::kTanh})
      for (const int threads : {1, 2}) {
        set_num_threads(threads);
        CAPTURE(threads);
        uint64_t next_fused = 0, next_reference = 0;
        const test::Grads fused = test::run_with_grads({x, w, b}, gy, [&](const auto& v) {
          Generator drop(17);
          Var y = gelu_linear(v[0], v[1], v[2], approx, {.p = real(0.25), .gen = &drop});
          next_fused = drop.next_u64();
          return y;
        });
        const test::Grads reference = test::run_with_grads({x, w, b}, gy, [&](const auto& v) {
          Generator drop(17);
          Var y =
              add(matmul(dropout(gelu(v[0], approx), real(0.25), drop), v[1], false, true), v[2]);
          next_reference = drop.next_u64();
          return y;
        });
        check_same(fused, reference);
        CHECK(next_fused == next_reference);
        const test::Grads plain = test::run_with_grads(
            {x, w, b}, gy, [&](const auto& v) { return gelu_linear(v[0], v[1], v[2], approx); });
        CHECK(max_abs_diff(plain.y, fused.y) > 1e-2);  // the mask acts
      }
  }

  TEST_CASE("fast and reference paths agree with dropout: GELU feed-forward, self-attention") {
    Generator gen(9);
    const Tensor x = Tensor::randn({4, 24, 32}, gen), gy = Tensor::randn({4, 24, 32}, gen);
    auto feed_forward_run = [&](bool reference) {
      ReferenceModeScope mode(reference);
      Generator init(3);
      auto drop_gen = std::make_shared<Generator>(21);
      Linear l1(32, 64, true, init), l2(64, 32, true, init);
      Dropout drop(0.2, drop_gen);
      test::Grads g = test::run_with_grads({x}, gy, [&](const auto& v) {
        return feed_forward(v[0], l1, l2, Activation::kGELU, drop);
      });
      for (const Var& p : {l1.weight, l1.bias, l2.weight, l2.bias}) g.d.push_back(p.grad());
      g.d.push_back(Tensor::from_vector({1}, {real(drop_gen->next_u64() % 1024)}));
      return g;
    };
    check_same(feed_forward_run(false), feed_forward_run(true));
    auto attention_run = [&](bool reference) {
      ReferenceModeScope mode(reference);
      Generator init(4);
      auto drop_gen = std::make_shared<Generator>(22);
      MultiheadAttentionOptions o;
      o.dropout = 0.2;
      MultiheadAttention mha(32, 4, init, o, drop_gen);
      test::Grads g = test::run_with_grads({x}, gy, [&](const auto& v) {
        return mha.forward(v[0], v[0], v[0], {.causal = true}).out;
      });
      for (const auto& [name, p] : mha.named_parameters()) g.d.push_back(p.grad());
      g.d.push_back(Tensor::from_vector({1}, {real(drop_gen->next_u64() % 1024)}));
      return g;
    };
    check_same(attention_run(false), attention_run(true));
  }
}

}  // namespace attn::nn
