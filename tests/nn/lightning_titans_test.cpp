// Lightning attention equals causal linear attention whatever the block size; the Titans memory
// write is the closed-form gradient step of its associative loss; the Titans layer is causal.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/tape.h"
#include "nn/attention/lightning_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/titans_memory.h"

#include "tests/nn/run_with_grads.h"

namespace attn::nn {

using test::Grads;
using test::run_with_grads;

TEST_SUITE("nn") {
  TEST_CASE("lightning attention == causal linear attention, values and gradients") {
    Generator gen(41);
    const int64_t t = 11;
    const std::vector<Tensor> in = {Tensor::randn({2, 2, t, 4}, gen),
                                    Tensor::randn({2, 2, t, 4}, gen),
                                    Tensor::randn({2, 2, t, 3}, gen)};
    const Tensor gy = Tensor::randn({2, 2, t, 3}, gen);
    const Grads want = run_with_grads(in, gy, [](const std::vector<Var>& v) {
      return linear_attention(v[0], v[1], v[2], /*causal=*/true);
    });
    // Blocks of one row (the recurrence), blocks that divide T or not, one block, more than T.
    for (const int64_t block : {1, 2, 3, 4, 5, 10, 11, 16}) {
      CAPTURE(block);
      const Grads got = run_with_grads(in, gy, [block](const std::vector<Var>& v) {
        return lightning_attention(v[0], v[1], v[2], block);
      });
      CHECK(max_abs_diff(got.y, want.y) <= 1e-5);
      for (size_t i = 0; i < in.size(); ++i) {
        CAPTURE(i);
        CHECK(max_abs_diff(got.d[i], want.d[i]) <= 1e-5);
      }
    }
  }

  TEST_CASE("LightningAttention layer == LinearAttention causal with the same weights") {
    Generator gen(42);
    LightningAttention light(8, 2, /*block_size=*/3, gen);
    LinearAttention linear(8, 2, gen, /*causal=*/true);
    linear.load_state_dict(light.state_dict());
    const Tensor x = Tensor::randn({2, 7, 8}, gen);
    NoGrad off;
    CHECK(max_abs_diff(light.forward(Var::constant(x)).value(),
                       linear.forward(Var::constant(x)).value()) <= 1e-5);
    CHECK_THROWS_AS(LightningAttention(8, 2, 0, gen), Error);
  }

  TEST_CASE("Titans memory write == the closed-form gradient step of ||k M - v||^2") {
    Generator gen(43);
    const Tensor m0 = Tensor::randn({2, 4, 3}, gen), s0 = Tensor::randn({2, 4, 3}, gen);
    const Tensor k = Tensor::randn({2, 5, 4}, gen), v = Tensor::randn({2, 5, 3}, gen);
    // The associative loss's gradient by the tape, l = sum_b (1/n) sum_i ||k_i M_b - v_i||^2.
    Var m = Var::parameter(m0.clone());
    const Var r = sub(matmul(Var::constant(k), m), Var::constant(v));
    mul_scalar(sum(mul(r, r)), real(1) / 5).backward();
    const Tensor tape_grad = m.grad();
    NoGrad off;
    const Tensor closed =
        memory_gradient(Var::constant(m0), Var::constant(k), Var::constant(v)).value();
    CHECK(max_abs_diff(closed, tape_grad) <= 1e-5);
    // By hand: G = (2/n) K^T (K M - V), element by element for batch 1, row 2, column 1.
    double g = 0;
    for (int64_t i = 0; i < 5; ++i) {
      double resid = -double(v[(5 + i) * 3 + 1]);
      for (int64_t a = 0; a < 4; ++a) resid += double(k[(5 + i) * 4 + a]) * m0[(4 + a) * 3 + 1];
      g += 2.0 / 5 * double(k[(5 + i) * 4 + 2]) * resid;
    }
    CHECK(double(closed[(4 + 2) * 3 + 1]) == doctest::Approx(g).epsilon(1e-5));
    // The write: s' = eta s - theta G, m' = (1 - alpha) m + s'.
    const real eta = 0.7f, theta = 0.3f, alpha = 0.1f;
    const NeuralMemory out =
        memory_write({Var::constant(m0), Var::constant(s0)}, Var::constant(k), Var::constant(v),
                     Var::constant(Tensor::full({1}, eta)), Var::constant(Tensor::full({1}, theta)),
                     Var::constant(Tensor::full({1}, alpha)));
    double worst_s = 0, worst_m = 0;
    for (int64_t i = 0; i < m0.numel(); ++i) {
      const double s1 = eta * double(s0[i]) - theta * double(closed[i]);
      const double m1 = (1 - alpha) * double(m0[i]) + s1;
      worst_s = std::max(worst_s, std::abs(double(out.s->value()[i]) - s1));
      worst_m = std::max(worst_m, std::abs(double(out.m.value()[i]) - m1));
    }
    CHECK(worst_s <= 1e-5);
    CHECK(worst_m <= 1e-5);
    // The first write has no momentum yet: s' = -theta G.
    const NeuralMemory first =
        memory_write({Var::constant(m0), std::nullopt}, Var::constant(k), Var::constant(v),
                     Var::constant(Tensor::full({1}, eta)), Var::constant(Tensor::full({1}, theta)),
                     Var::constant(Tensor::full({1}, alpha)));
    CHECK(double(first.s->value()[7]) == doctest::Approx(-theta * double(closed[7])));
  }

  TEST_CASE("Titans: repeated writes of one association drive its loss down") {
    // With normalised keys and theta in (0,1) the inner loop is a descent method on ||kM - v||^2.
    Generator gen(44);
    // 4 random unit keys in 16 dimensions: nearly orthogonal, so the loss can reach 0 quickly.
    const Var k = l2_normalize(Var::constant(Tensor::randn({1, 4, 16}, gen)));
    const Var v = Var::constant(Tensor::randn({1, 4, 16}, gen));
    auto loss = [&](const Var& m) {
      const Var r = sub(matmul(k, m), v);
      return double(sum(mul(r, r)).value()[0]);
    };
    NoGrad off;
    NeuralMemory mem{Var::constant(Tensor::zeros({1, 16, 16})), std::nullopt};
    const Var eta = Var::constant(Tensor::full({1}, 0.5f));
    const Var theta = Var::constant(Tensor::full({1}, 0.5f));
    const Var alpha = Var::constant(Tensor::full({1}, 0.0f));
    const double before = loss(mem.m);
    for (int step = 0; step < 40; ++step) mem = memory_write(mem, k, v, eta, theta, alpha);
    CHECK(loss(mem.m) < 0.01 * before);
  }

  TEST_CASE("TitansMemoryAttention: causal inside and across segments; the memory is used") {
    Generator gen(45);
    TitansMemoryAttention mac({.d_model = 8, .nhead = 2, .segment = 3, .persistent = 2}, gen);
    // A non-zero initial memory and a real write, so memory tokens carry information.
    for (int64_t i = 0; i < mac.memory_init.value().numel(); ++i)
      mac.memory_init.value()[i] = real(0.3 * gen.normal());
    const Tensor x = Tensor::randn({1, 10, 8}, gen);
    NoGrad off;
    const Tensor y = mac.forward(Var::constant(x)).value();
    CHECK(y.shape() == Shape{1, 10, 8});
    for (const int64_t changed : {1, 2, 3, 5, 9}) {  // inside the first segment, at a boundary...
      CAPTURE(changed);
      Tensor x2 = x.clone();
      for (int64_t c = 0; c < 8; ++c) x2[changed * 8 + c] += 1.0f;
      const Tensor y2 = mac.forward(Var::constant(x2)).value();
      double before = 0, after = 0;
      for (int64_t i = 0; i < 10 * 8; ++i) {
        double& worst = i < changed * 8 ? before : after;
        worst = std::max(worst, std::abs(double(y[i]) - double(y2[i])));
      }
      CHECK(before == 0.0);
      CHECK(after > 1e-4);
    }
    // Segment 2 reads what segment 1 wrote: changing row 1 changes row 3's output through the
    // memory alone (attention inside segment 2 cannot see segment 1).
    Tensor x3 = x.clone();
    for (int64_t c = 0; c < 8; ++c) x3[1 * 8 + c] -= 1.0f;
    const Tensor y3 = mac.forward(Var::constant(x3)).value();
    CHECK(std::abs(double(y3[3 * 8]) - double(y[3 * 8])) > 1e-5);
    CHECK_THROWS_AS(TitansMemoryAttention({.d_model = 8, .nhead = 2, .segment = 0}, gen), Error);
  }
}

}  // namespace attn::nn
