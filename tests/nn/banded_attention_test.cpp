// banded_attention (autograd/ops/fused/banded_attention.cpp) against the masked dense
// sliding-window attention it replaces: sdpa with nn::sliding_window_mask, the path of
// nn::SlidingWindowAttention. Outputs and all three gradients agree, causal or not, with the band
// clipped at both ends, a window wider than T, window 0 (each token sees only itself), and global
// tokens (Longformer: they see and are seen by every position).
#include <doctest/doctest.h>

#include <functional>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/attention/sdpa.h"
#include "nn/attention/sliding_window.h"

namespace attn::nn {

namespace {

struct Run {
  Tensor y;
  std::vector<Tensor> grads;  // dq, dk, dv
};

Run run(const std::vector<Tensor>& in,
        const Tensor& gy,
        const std::function<Var(const Var&, const Var&, const Var&)>& f) {
  std::vector<Var> leaves;
  for (const Tensor& t : in) leaves.push_back(Var::parameter(t.clone()));
  Var y = f(leaves[0], leaves[1], leaves[2]);
  y.backward(gy);
  Run r{y.value(), {}};
  for (const Var& l : leaves) r.grads.push_back(l.grad());
  return r;
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("banded attention equals masked dense sliding-window attention, values and gradients") {
    struct Case {
      int64_t t, window;
      bool causal;
      std::vector<int64_t> globals = {};
    };
    // Global tokens at the ends, in the middle, inside another's band, repeated, with window 0
    // and with a window wider than T (then every global key is already in the band).
    const std::vector<Case> cases = {Case{23, 3, false},
                                     Case{23, 3, true},
                                     Case{6, 9, false},
                                     Case{6, 9, true},
                                     Case{11, 0, false},
                                     Case{11, 0, true},
                                     Case{40, 7, true},
                                     Case{23, 3, false, {0}},
                                     Case{23, 3, true, {0, 22}},
                                     Case{23, 2, false, {5, 6, 17}},
                                     Case{23, 2, true, {11, 5, 11}},
                                     Case{11, 0, false, {4}},
                                     Case{11, 0, true, {0, 10}},
                                     Case{6, 9, false, {2}},
                                     Case{30, 4, true, {29}}};
    for (const Case& c : cases) {
      INFO("t=", c.t, " window=", c.window, " causal=", c.causal, " globals=", c.globals.size());
      Generator gen(c.t * 10 + c.window);
      const int64_t d = 8, dv = 5;
      const std::vector<Tensor> in = {Tensor::randn({2, 3, c.t, d}, gen),
                                      Tensor::randn({2, 3, c.t, d}, gen),
                                      Tensor::randn({2, 3, c.t, dv}, gen)};
      const Tensor gy = Tensor::randn({2, 3, c.t, dv}, gen);
      const Run band = run(in, gy, [&](const Var& q, const Var& k, const Var& v) {
        return banded_attention(q, k, v, c.window, c.causal, 0, c.globals);
      });
      const Run dense = run(in, gy, [&](const Var& q, const Var& k, const Var& v) {
        SdpaOptions opt;
        opt.masks.attn_mask = sliding_window_mask(c.t, c.window, c.causal, c.globals);
        return scaled_dot_product_attention(q, k, v, opt).out;
      });
      CHECK(max_abs_diff(band.y, dense.y) <= 1e-5);
      for (size_t i = 0; i < 3; ++i) {
        INFO("gradient of input ", i);
        CHECK(max_abs_diff(band.grads[i], dense.grads[i]) <= 1e-5);
      }
    }
  }

  TEST_CASE("banded attention keeps only the band (T x (2w+1)) for backward") {
    Generator gen(3);
    const int64_t t = 300, d = 4, w = 5;
    Var q = Var::parameter(Tensor::randn({1, 1, t, d}, gen));
    Var y = banded_attention(q, q, q, w);
    // One record whose output is (T,D); the op's saved weights are (1,T,2w+1), nothing (T,T).
    CHECK(tape().size() == 1);
    CHECK(tape().record(0).output.numel() == t * d);
    y.backward(Tensor::ones({1, 1, t, d}));
    CHECK(q.grad().numel() == t * d);
    tape().clear();
    CHECK_THROWS_AS(banded_attention(q, slice(q, 2, 0, 10), slice(q, 2, 0, 10), 2), Error);
    CHECK_THROWS_AS(banded_attention(q, q, q, -1), Error);
    CHECK_THROWS_AS(banded_attention(q, q, q, 2, false, 0, {t}), Error);
    CHECK_THROWS_AS(banded_attention(q, q, q, 2, false, 0, {-1}), Error);
  }
}

}  // namespace attn::nn
