// The Titans deep (MLP) memory's closed-form gradients equal the tape's, repeated writes drive
// its associative loss down, and memory as a gate / as a layer are causal and read what earlier
// segments wrote.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/tape.h"
#include "nn/attention/titans_memory.h"
#include "nn/attention/titans_variants.h"

namespace attn::nn {

namespace {

// l = sum_b (1/n) sum_i ||M_b(k_i) - v_i||^2 for the MLP memory (W1, W2).
Var mlp_loss(const Var& w1, const Var& w2, const Tensor& k, const Tensor& v) {
  const Var r = sub(mlp_memory_read(w1, w2, Var::constant(k)), Var::constant(v));
  return mul_scalar(sum(mul(r, r)), real(1) / static_cast<real>(k.size(1)));
}

// Largest |y - y2| over rows before `row` and over rows from `row` on, for a change at `row`.
std::pair<double, double> change_before_after(const std::function<Tensor(const Tensor&)>& f,
                                              const Tensor& x,
                                              int64_t row) {
  const int64_t d = x.size(2), t = x.size(1);
  Tensor x2 = x.clone();
  for (int64_t c = 0; c < d; ++c) x2[row * d + c] += 1.0f;
  const Tensor y = f(x), y2 = f(x2);
  double before = 0, after = 0;
  for (int64_t i = 0; i < t * d; ++i) {
    double& worst = i < row * d ? before : after;
    worst = std::max(worst, std::abs(double(y[i]) - double(y2[i])));
  }
  return {before, after};
}

}  // namespace

TEST_SUITE("nn-titans") {
  TEST_CASE("Titans deep memory: closed-form gradients == the tape's") {
    Generator gen(51);
    const Tensor w1 = Tensor::randn({2, 4, 3}, gen), w2 = Tensor::randn({2, 3, 4}, gen);
    const Tensor k = Tensor::randn({2, 5, 4}, gen), v = Tensor::randn({2, 5, 4}, gen);
    Var p1 = Var::parameter(w1.clone()), p2 = Var::parameter(w2.clone());
    mlp_loss(p1, p2, k, v).backward();
    NoGrad off;
    const auto [g1, g2] = mlp_memory_gradients(Var::constant(w1), Var::constant(w2),
                                               Var::constant(k), Var::constant(v));
    CHECK(max_abs_diff(g1.value(), p1.grad()) <= 1e-5);
    CHECK(max_abs_diff(g2.value(), p2.grad()) <= 1e-5);
  }

  TEST_CASE("Titans deep memory: repeated writes of one segment drive its loss down") {
    Generator gen(52);
    TitansGateAttention mag({.d_model = 4,
                             .nhead = 2,
                             .segment = 3,
                             .window = 1,
                             .memory_depth = 2,
                             .memory_hidden = 6},
                            gen);
    const Var xs = Var::constant(Tensor::randn({1, 3, 4}, gen));
    Var alpha_logit = mag.alpha_logit;  // no forgetting: the loss can fall towards 0
    alpha_logit.value()[0] = -20;
    NoGrad off;
    MemoryWeights w = mag.start(1);
    REQUIRE(w.size() == 2);
    std::vector<MemoryWriteRecord> trace;
    mag.trace_writes(&trace);
    for (int step = 0; step < 60; ++step) w = mag.write(w, xs, step);
    mag.trace_writes(nullptr);
    REQUIRE(trace.size() == 60);
    // Each record holds the loss before its write: the last is a small share of the first.
    CHECK(trace.back().loss_before[0] < 0.01 * trace.front().loss_before[0]);
    CHECK(trace.front().update_norm[0] > 0);
  }

  TEST_CASE("Titans MAG and MAL: causal; a later segment reads what an earlier one wrote") {
    Generator gen(53);
    for (int64_t depth : {1, 2}) {
      CAPTURE(depth);
      const TitansHybridOptions o{
          .d_model = 8, .nhead = 2, .segment = 3, .window = 1, .memory_depth = depth};
      TitansGateAttention mag(o, gen);
      TitansLayerAttention mal(o, gen);
      // A non-empty initial memory, so the reads carry the input from the first write on.
      for (LongTermMemory* m : std::initializer_list<LongTermMemory*>{&mag, &mal}) {
        Var init = depth == 1 ? m->memory_init : m->memory_init_out;
        for (int64_t i = 0; i < init.value().numel(); ++i)
          init.value()[i] = real(0.3 * gen.normal());
      }
      const Tensor x = Tensor::randn({1, 10, 8}, gen);
      NoGrad off;
      for (const auto* layer :
           {static_cast<const Module*>(&mag), static_cast<const Module*>(&mal)}) {
        const auto f = [&](const Tensor& in) {
          return layer == &mag ? mag.forward(Var::constant(in)).value()
                               : mal.forward(Var::constant(in)).value();
        };
        for (const int64_t row : {1, 3, 9}) {
          const auto [before, after] = change_before_after(f, x, row);
          CHECK(before == 0.0);
          CHECK(after > 1e-4);
        }
        // Row 0 changes row 7's output (segment 3) only through the memory: the window of 1
        // cannot reach back 7 rows.
        Tensor x2 = x.clone();
        for (int64_t c = 0; c < 8; ++c) x2[c] -= 1.0f;
        const Tensor y = f(x), y2 = f(x2);
        double row7 = 0;
        for (int64_t c = 0; c < 8; ++c)
          row7 = std::max(row7, std::abs(double(y[7 * 8 + c]) - double(y2[7 * 8 + c])));
        CHECK(row7 > 1e-5);
      }
    }
    CHECK_THROWS_AS(TitansGateAttention({.d_model = 8, .nhead = 2, .segment = 0}, gen), Error);
    CHECK_THROWS_AS(TitansLayerAttention({.d_model = 8, .memory_depth = 3}, gen), Error);
  }
}

}  // namespace attn::nn
