// linear-zoo's layers against their written-out definitions: the dilated mask's lattice, the
// denominator-free prefix sums against tril(fq fk^T) v (values and gradients), PolaFormer's two
// streams against the kernel rows they imply, the causal depthwise convolution against its sum,
// and AWRSR's rows (distributions, causal, the additive mean). Every layer is causal: a change
// at the last position leaves the earlier outputs alone.
#include <doctest/doctest.h>

#include <functional>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/tape.h"
#include "nn/attention/dilated_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/norm_linear_attention.h"
#include "nn/attention/polarity_attention.h"
#include "nn/attention/refined_attention.h"
#include "nn/attention/sana_block.h"

#include "tests/nn/run_with_grads.h"

namespace attn::nn {

using test::Grads;
using test::run_with_grads;

namespace {

Tensor lower_ones(int64_t t) {  // 1 on and below the diagonal
  Tensor m = Tensor::zeros({t, t});
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j <= i; ++j) m[i * t + j] = 1;
  return m;
}

// Outputs at positions < t-1 do not move when the last input position changes.
void check_causal(const std::function<Var(const Var&)>& f, int64_t t, int64_t d, Generator& gen) {
  NoGrad off;
  Tensor x = Tensor::randn({1, t, d}, gen);
  const Tensor y1 = f(Var::constant(x)).value();
  for (int64_t c = 0; c < d; ++c) x[(t - 1) * d + c] += 1;
  const Tensor y2 = f(Var::constant(x)).value();
  CHECK(max_abs_diff(slice(Var::constant(y1), 1, 0, t - 1).value(),
                     slice(Var::constant(y2), 1, 0, t - 1).value()) == 0);
  CHECK(max_abs_diff(y1, y2) > 0);
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("dilated_mask: head h sees i - m r for m < keys, nothing else") {
    const Tensor m = dilated_mask(9, 3, {1, 2});
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 9; ++i)
        for (int64_t j = 0; j < 9; ++j) {
          const int64_t r = h == 0 ? 1 : 2, d = i - j;
          const bool seen = d >= 0 && d % r == 0 && d / r < 3;
          CHECK(m[(h * 9 + i) * 9 + j] == (seen ? 0 : 1));
        }
    Generator gen(1);
    CHECK_THROWS_AS(DilatedAttention(8, 2, 3, {1}, gen), Error);
    CHECK_THROWS_AS(dilated_mask(4, 0, {1}), Error);
    const DilatedAttention da(8, 2, 3, {1, 2}, gen);
    check_causal([&](const Var& x) { return da.forward(x).out; }, 7, 8, gen);
  }

  TEST_CASE("causal_kernel_sums == tril(fq fk^T) v, values and gradients") {
    Generator gen(2);
    const int64_t t = 7;
    const std::vector<Tensor> in = {Tensor::rand({2, 2, t, 3}, gen),
                                    Tensor::rand({2, 2, t, 3}, gen),
                                    Tensor::randn({2, 2, t, 4}, gen)};
    const Tensor gy = Tensor::randn({2, 2, t, 4}, gen);
    const Grads want = run_with_grads(in, gy, [t](const std::vector<Var>& v) {
      const Var a = mul(matmul(v[0], v[1], false, true), Var::constant(lower_ones(t)));
      return matmul(a, v[2]);
    });
    const Grads got = run_with_grads(
        in, gy, [](const std::vector<Var>& v) { return causal_kernel_sums(v[0], v[1], v[2]); });
    CHECK(max_abs_diff(got.y, want.y) <= 1e-4);
    for (size_t i = 0; i < in.size(); ++i) CHECK(max_abs_diff(got.d[i], want.d[i]) <= 1e-4);
  }

  TEST_CASE("PolarityAttention: each stream is its kernel rows times its half of v") {
    Generator gen(3);
    const PolarityAttention pa(8, 2, gen);
    const Var x = Var::constant(Tensor::randn({2, 6, 8}, gen));
    NoGrad off;
    const HeadsQKV a = pa.project(x);
    const PolarityWeights w = pa.weights(x);
    const Var streams = concat(
        {matmul(w.same, slice(a.v, -1, 0, 2)), matmul(w.opposite, slice(a.v, -1, 2, 4))}, -1);
    CHECK(max_abs_diff(pa.forward(x).value(), pa.combine(streams).value()) <= 1e-5);
    // The kernel rows are distributions (eps 0 here; the layer adds 1e-6 to each row's sum), and
    // zero above the diagonal; the power starts at 3.
    const Var rows = causal_kernel_weights(Var::constant(Tensor::rand({2, 2, 6, 3}, gen)),
                                           Var::constant(Tensor::rand({2, 2, 6, 3}, gen)), 0);
    CHECK(max_abs_diff(sum(rows, -1).value(), Tensor::ones({2, 2, 6})) <= 1e-6);
    CHECK(rows.value()[1] == 0);
    CHECK(pa.power().value()[0] == doctest::Approx(3.0));
    check_causal([&](const Var& y) { return pa.forward(y); }, 6, 8, gen);
    CHECK_THROWS_AS(PolarityAttention(6, 2, gen), Error);  // head width 3 is odd
  }

  TEST_CASE("causal_depthwise_conv: y_t = sum_j w_j x_{t-j}; SANA and TransNormer are causal") {
    Generator gen(4);
    const Tensor x = Tensor::randn({1, 5, 2}, gen), w = Tensor::randn({3, 2}, gen);
    NoGrad off;
    const Tensor y = causal_depthwise_conv(Var::constant(x), Var::constant(w)).value();
    for (int64_t t = 0; t < 5; ++t)
      for (int64_t c = 0; c < 2; ++c) {
        double want = 0;
        for (int64_t j = 0; j < 3 && t - j >= 0; ++j) want += w[j * 2 + c] * x[(t - j) * 2 + c];
        CHECK(y[t * 2 + c] == doctest::Approx(want).epsilon(1e-5));
      }
    const SanaBlock sana(8, 2, 6, gen);
    check_causal([&](const Var& v) { return sana.forward(v); }, 6, 8, gen);
    const NormLinearAttention norm(8, 2, gen);
    check_causal([&](const Var& v) { return norm.forward(v); }, 6, 8, gen);
  }

  TEST_CASE("RefinedAttention: rows are causal distributions, additive = (A + B) / 2") {
    Generator gen(5);
    const RefinedAttention simple(8, 2, 10, 4, Refinement::kSimple, gen);
    const RefinedAttention additive(8, 2, 10, 4, Refinement::kAdditive, gen);
    const Var x = Var::constant(Tensor::randn({2, 6, 8}, gen));
    NoGrad off;
    const RefinedWeights w = additive.weights(x);
    CHECK(max_abs_diff(sum(w.used, -1).value(), Tensor::ones({2, 2, 6})) <= 1e-5);
    CHECK(max_abs_diff(w.used.value(), mul_scalar(add(w.first, w.refined), 0.5).value()) <= 1e-6);
    const Tensor b = simple.weights(x).used.value();
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t j = i + 1; j < 6; ++j) CHECK(b[i * 6 + j] == 0);
    check_causal([&](const Var& v) { return simple.forward(v); }, 6, 8, gen);
    CHECK_THROWS_AS(simple.forward(Var::constant(Tensor::randn({1, 11, 8}, gen))), Error);
  }
}

}  // namespace attn::nn
