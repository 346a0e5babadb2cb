// The gradient-flow probe: exact on a function it can be checked by hand; on a fixed seed an
// untrained tanh RNN's gradient decays with distance and self-attention's does not.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/functional.h"
#include "nn/attention/multihead_attention.h"
#include "nn/gradient_probe.h"
#include "nn/rnn/recurrent.h"

namespace attn {

namespace {

// Least-squares slope of log(norm) against distance d = last - t, over t < last.
double log_slope(const std::vector<double>& norms) {
  const int64_t last = static_cast<int64_t>(norms.size()) - 1;
  double sd = 0, sl = 0, sdd = 0, sdl = 0, n = 0;
  for (int64_t t = 0; t < last; ++t) {
    const double d = static_cast<double>(last - t), l = std::log(norms[t]);
    sd += d, sl += l, sdd += d * d, sdl += d * l, n += 1;
  }
  return (n * sdl - sd * sl) / (n * sdd - sd * sd);
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("gradient probe: a loss reading one position puts all gradient there") {
    Generator gen(1);
    const Tensor x = Tensor::randn({2, 5, 3}, gen);
    const Tensor u = Tensor::randn({2, 3}, gen);
    const nn::GradientProbe p =
        nn::probe_gradient_flow(x, [&](const Var& xv) { return nn::readout_loss(xv, 2, u); });
    REQUIRE(p.norms.size() == 5);
    double norm_u = 0;
    for (real v : u.to_vector()) norm_u += double(v) * v;
    for (int64_t t = 0; t < 5; ++t)
      CHECK(p.norms[t] == doctest::Approx(t == 2 ? std::sqrt(norm_u) : 0.0));
    CHECK(p.relative()[2] == doctest::Approx(1.0));
  }

  TEST_CASE("gradient probe: tanh RNN decays with distance, self-attention does not") {
    const int64_t b = 4, t = 40, c = 16;
    Generator gen(2024);
    const Tensor x = Tensor::randn({b, t, c}, gen);
    const Tensor u = Tensor::randn({b, c}, gen);
    auto probe = [&](auto&& forward) {
      return nn::probe_gradient_flow(
          x, [&](const Var& xv) { return nn::readout_loss(forward(xv), t - 1, u); });
    };
    nn::RNN rnn({.input_size = c, .hidden_size = c, .batch_first = true}, gen);
    const nn::GradientProbe r = probe([&](const Var& xv) { return rnn.forward(xv).y; });
    nn::MultiheadAttention sa(c, 2, gen);  // self-attention, no positions, no mask
    const nn::GradientProbe a = probe([&](const Var& xv) { return sa.forward(xv, xv, xv).out; });
    const std::vector<double> rr = r.relative(), ar = a.relative();
    // RNN: geometric decay, 20 steps back is already below 1e-3 of the nearest position.
    CHECK(rr[t - 1] == 1.0);
    CHECK(rr[t - 21] < 1e-3);
    CHECK(log_slope(r.norms) < -0.2);
    // Attention: every earlier position is one step away; no trend with distance, and the
    // farthest positions get as much as the nearest ones (within a small factor).
    CHECK(std::abs(log_slope(a.norms)) < 0.02);
    double near = 0, far = 0;
    for (int64_t k = 1; k <= 10; ++k) near += a.norms[t - 1 - k], far += a.norms[k - 1];
    CHECK(far > 0.5 * near);
    CHECK(ar[0] > 100 * rr[0]);
    // The gated cells run through the same probe.
    for (auto mode : {nn::RecurrentMode::kGru, nn::RecurrentMode::kLstm}) {
      nn::Recurrent m(mode, {.input_size = c, .hidden_size = c, .batch_first = true}, gen);
      const nn::GradientProbe g = probe([&](const Var& xv) { return m.forward(xv).y; });
      REQUIRE(g.norms.size() == static_cast<size_t>(t));
      for (double n : g.norms) CHECK(std::isfinite(n));
      CHECK(g.norms[t - 1] > 0);
      // Untrained too, but the gates already keep far more gradient than the tanh RNN.
      CHECK(g.relative()[t - 21] > 10 * rr[t - 21]);
    }
  }
}

}  // namespace attn
