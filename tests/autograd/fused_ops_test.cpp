// Each fused op (softmax, log_softmax, layer_norm, rms_norm, cross_entropy, mse_loss,
// gelu_linear) equals the same formula written with primitive ops, in value and in every input
// gradient; plus numerical stability and the errors a student sees for bad shapes and targets.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"

namespace attn {

namespace {

using Fn = std::function<Var(const std::vector<Var>&)>;

struct Result {
  Tensor y;
  std::vector<Tensor> grads;
};

// Runs f on fresh leaves holding copies of `values`, backpropagates one fixed random upstream
// gradient, and returns the output with every leaf's gradient.
Result run(const std::vector<Tensor>& values, const Fn& f) {
  std::vector<Var> leaves;
  for (const Tensor& v : values) leaves.push_back(Var::parameter(v.clone()));
  Var y = f(leaves);
  Generator g(77);
  y.backward(Tensor::randn(y.shape(), g));
  Result r{y.value(), {}};
  for (const Var& leaf : leaves) r.grads.push_back(leaf.grad());
  return r;
}

// max|a - b| / max(1, max|b|): the parity suite's measure.
double rel_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  double scale = 1;
  for (int64_t i = 0; i < b.numel(); ++i) scale = std::max(scale, std::abs(double(b[i])));
  return max_abs_diff(a, b) / scale;
}

// Both in float32 with different rounding orders, so they agree to a few float ulps of the
// largest value: 1e-5, the same bound as the PyTorch parity suite.
void check_fused_equals_composed(const std::vector<Tensor>& values,
                                 const Fn& fused,
                                 const Fn& composed) {
  const Result a = run(values, fused), b = run(values, composed);
  CHECK(rel_diff(a.y, b.y) <= 1e-5);
  for (size_t i = 0; i < values.size(); ++i) {
    INFO("gradient of input ", i);
    CHECK(rel_diff(a.grads[i], b.grads[i]) <= 1e-5);
  }
}

// The row maxima of x over the last axis, shape (...,1), as a constant: subtracting a
// constant from a row leaves softmax unchanged, so the composition needs no max gradient.
Var row_max(const Var& x) {
  Shape s = x.shape();
  const int64_t c = s.back();
  s.back() = 1;
  Tensor m = Tensor::empty(s);
  for (int64_t r = 0; r < m.numel(); ++r)
    m[r] = *std::max_element(x.value().data() + r * c, x.value().data() + (r + 1) * c);
  return Var::constant(m);
}

// log softmax from primitives: x - m - log(sum_j exp(x_j - m)).
Var composed_log_softmax(const Var& x) {
  Var shifted = sub(x, row_max(x));
  return sub(shifted, log(sum(exp(shifted), -1, true)));
}

// The smoothed target distribution of cross-entropy as a constant (R,C): (1-eps) one_hot(t)
// + eps/C on kept rows, zeros on ignored rows.
Var target_distribution(const Tensor& targets, int64_t c, int64_t ignore, real eps) {
  Tensor q({targets.numel(), c});
  for (int64_t r = 0; r < targets.numel(); ++r) {
    if (targets[r] == static_cast<real>(ignore)) continue;
    for (int64_t j = 0; j < c; ++j) q[r * c + j] = eps / static_cast<real>(c);
    q[r * c + static_cast<int64_t>(targets[r])] += 1 - eps;
  }
  return Var::constant(q);
}

Tensor ids(const Shape& shape, const std::vector<real>& values) {
  return Tensor::from_vector(shape, values);
}

}  // namespace

TEST_SUITE("autograd") {
  TEST_CASE("softmax equals exp(x - max) / sum exp(x - max), values and gradients") {
    Generator g(1);
    check_fused_equals_composed(
        {Tensor::randn({3, 4, 5}, g, 3.0)}, [](const auto& v) { return softmax(v[0]); },
        [](const auto& v) {
          Var e = exp(sub(v[0], row_max(v[0])));
          return div(e, sum(e, -1, true));
        });
  }

  TEST_CASE("log_softmax equals log(softmax(x)) and x - max - log sum exp(x - max)") {
    Generator g(2);
    const Tensor x = Tensor::randn({4, 6}, g, 2.0);
    check_fused_equals_composed(
        {x}, [](const auto& v) { return log_softmax(v[0]); },
        [](const auto& v) { return log(softmax(v[0])); });
    check_fused_equals_composed(
        {x}, [](const auto& v) { return log_softmax(v[0]); },
        [](const auto& v) { return composed_log_softmax(v[0]); });
  }

  TEST_CASE("log_softmax and cross_entropy stay finite where exp would overflow") {
    Var x = Var::parameter(Tensor::from_vector({1, 3}, {1000, 0, -1000}));
    Var y = log_softmax(x);
    CHECK(y.value()[0] == doctest::Approx(0));
    CHECK(y.value()[1] == doctest::Approx(-1000));
    CHECK(y.value()[2] == doctest::Approx(-2000));
    Var loss = cross_entropy(x, ids({1}, {1}));
    CHECK(loss.item() == doctest::Approx(1000));
    loss.backward();
    CHECK(x.grad()[0] == doctest::Approx(1));  // softmax - one_hot = (1,0,0) - (0,1,0)
    CHECK(x.grad()[1] == doctest::Approx(-1));
    CHECK(x.grad()[2] == doctest::Approx(0));
  }

  TEST_CASE("layer_norm equals (x - mean) / sqrt(var + eps) * w + b") {
    Generator g(3);
    const real eps = 1e-5;
    // Rows of 8, and of 64 (a multiple of 32: the four-vector reductions, kernels/row_stats.h).
    for (const int64_t c : {8, 64})
      check_fused_equals_composed(
          {Tensor::randn({2, 3, c}, g, 2.0), Tensor::rand({c}, g, 0.5, 1.5), Tensor::randn({c}, g)},
          [eps](const auto& v) { return layer_norm(v[0], v[1], v[2], eps); },
          [eps](const auto& v) {
            Var centred = sub(v[0], mean(v[0], -1, true));
            Var var = mean(mul(centred, centred), -1, true);
            return add(mul(div(centred, sqrt(add_scalar(var, eps))), v[1]), v[2]);
          });
  }

  TEST_CASE("rms_norm equals x / sqrt(mean(x^2) + eps) * w") {
    Generator g(4);
    const real eps = 1e-6;
    check_fused_equals_composed(
        {Tensor::randn({3, 7}, g, 2.0), Tensor::rand({7}, g, 0.5, 1.5)},
        [eps](const auto& v) { return rms_norm(v[0], v[1], eps); },
        [eps](const auto& v) {
          Var ms = mean(pow(v[0], 2), -1, true);
          return mul(div(v[0], sqrt(add_scalar(ms, eps))), v[1]);
        });
  }

  TEST_CASE("cross_entropy equals -mean of the target entries of log_softmax") {
    Generator g(5);
    const Tensor targets = ids({5}, {2, 0, 3, 3, 1});
    check_fused_equals_composed(
        {Tensor::randn({5, 4}, g, 2.0)},
        [&](const auto& v) { return cross_entropy(v[0], targets); },
        [&](const auto& v) {
          Var picked =
              sum(mul(composed_log_softmax(v[0]), target_distribution(targets, 4, -100, 0)),
                  -1);  // (N): log p of each row's target
          return neg(mean(picked));
        });
  }

  TEST_CASE("cross_entropy (B,T,C) with ignored rows and label smoothing matches its formula") {
    Generator g(6);
    const real eps = 0.1;
    const Tensor targets = ids({2, 3}, {0, 2, 4, 1, 0, 3});  // ignore_index 0: two rows ignored
    const int64_t kept = 4;
    check_fused_equals_composed(
        {Tensor::randn({2, 3, 5}, g, 2.0)},
        [&](const auto& v) { return cross_entropy(v[0], targets, 0, eps); },
        [&](const auto& v) {
          // -(1/kept) sum_rows sum_c q_c log p_c with q = (1-eps) one_hot + eps/C on kept rows
          Var logp = composed_log_softmax(reshape(v[0], {6, 5}));
          return mul_scalar(neg(sum(mul(logp, target_distribution(targets, 5, 0, eps)))),
                            real(1) / kept);
        });
  }

  TEST_CASE("mse_loss equals mean((a - b)^2)") {
    Generator g(7);
    check_fused_equals_composed(
        {Tensor::randn({3, 4}, g), Tensor::randn({3, 4}, g)},
        [](const auto& v) { return mse_loss(v[0], v[1]); },
        [](const auto& v) { return mean(pow(sub(v[0], v[1]), 2)); });
  }

  TEST_CASE("gelu_linear equals linear(gelu(x)), also when x has other uses") {
    Generator g(9);
    for (const GeluApprox approx : {GeluApprox::kNone, GeluApprox::kTanh}) {
      // 40 rows reach the panel kernel; x also feeds a second term, so its gradient arrives
      // from both (the fused op's must add to the other, not overwrite it).
      check_fused_equals_composed(
          {Tensor::randn({40, 24}, g), Tensor::randn({9, 24}, g), Tensor::randn({9}, g)},
          [approx](const auto& v) {
            return add(gelu_linear(v[0], v[1], v[2], approx), linear(v[0], v[1]));
          },
          [approx](const auto& v) {
            return add(linear(gelu(v[0], approx), v[1], v[2]), linear(v[0], v[1]));
          });
    }
  }

  TEST_CASE("linear's input and weight gradients side by side on 2 threads equal matmul + add") {
    // Big enough for kernels::run_pair to give each product its own thread; x and w also feed a
    // second term, so both gradients already exist when linear's backward adds into them.
    const int before = num_threads();
    set_num_threads(2);
    Generator g(21);
    // Plain, with ReLU (no column sums in the GEMM) and with GELU (the scaled store).
    for (const int kind : {0, 1, 2})
      check_fused_equals_composed(
          {Tensor::randn({512, 64}, g), Tensor::randn({48, 64}, g), Tensor::randn({48}, g)},
          [kind](const auto& v) {
            const Var y = kind == 1   ? linear_relu(v[0], v[1], v[2])
                          : kind == 2 ? gelu_linear(v[0], v[1], v[2])
                                      : linear(v[0], v[1], v[2]);
            return add(y, matmul(v[0], v[1], false, true));
          },
          [kind](const auto& v) {
            const Var in = kind == 2 ? gelu(v[0]) : v[0];
            const Var y = add(matmul(in, v[1], false, true), v[2]);
            return add(kind == 1 ? attn::relu(y) : y, matmul(v[0], v[1], false, true));
          });
    set_num_threads(before);
  }

  TEST_CASE("fused op errors name the op and the shapes or the bad value") {
    Var x = Var::parameter(Tensor::ones({2, 3}));
    Var w3 = Var::parameter(Tensor::ones({3}));
    Var w4 = Var::parameter(Tensor::ones({4}));
    CHECK_THROWS_WITH_AS(log_softmax(Var::parameter(Tensor::scalar(1))),
                         doctest::Contains("log_softmax: needs rank >= 1"), Error);
    CHECK_THROWS_WITH_AS(layer_norm(x, w4, w4),
                         doctest::Contains("layer_norm: expected x (...,C) with weight (C) and "
                                           "bias (C), got x (2,3), weight (4), bias (4)"),
                         Error);
    CHECK_THROWS_WITH_AS(layer_norm(x, w3, w4), doctest::Contains("bias (4)"), Error);
    CHECK_THROWS_WITH_AS(rms_norm(x, w4),
                         doctest::Contains("rms_norm: expected x (...,C) with weight (C), got x "
                                           "(2,3), weight (4)"),
                         Error);
    CHECK_THROWS_WITH_AS(mse_loss(x, w3),
                         doctest::Contains("mse_loss (a vs b): shapes differ: "
                                           "(2,3) vs (3)"),
                         Error);

    CHECK_THROWS_WITH_AS(cross_entropy(w3, ids({1}, {0})),
                         doctest::Contains("cross_entropy: expected logits (N,C) with targets (N)"),
                         Error);
    CHECK_THROWS_WITH_AS(cross_entropy(x, ids({3}, {0, 1, 2})),
                         doctest::Contains("got logits (2,3) and targets (3)"), Error);
    CHECK_THROWS_WITH_AS(cross_entropy(x, ids({2}, {1, 3})),
                         doctest::Contains("cross_entropy: target 3 at row 1 is out of range for "
                                           "3 classes (logits (2,3))"),
                         Error);
    CHECK_THROWS_WITH_AS(cross_entropy(x, ids({2}, {-1, 0})), doctest::Contains("target -1"),
                         Error);
    CHECK_THROWS_WITH_AS(cross_entropy(x, ids({2}, {5, 5}), 5),
                         doctest::Contains("every target equals ignore_index 5"), Error);
    CHECK_THROWS_WITH_AS(cross_entropy(x, ids({2}, {0, 1}), -100, 1.5),
                         doctest::Contains("label_smoothing must be in [0, 1], got 1.5"), Error);
    CHECK(tape().size() == 0);  // nothing half-recorded by a failed call
  }
}

}  // namespace attn
