// banded_attention (autograd/ops/fused/banded_attention.cpp) against the masked dense
// sliding-window attention it replaces: sdpa with nn::sliding_window_mask, the path of
// nn::SlidingWindowAttention. Outputs and all three gradients agree, causal or not, with the band
// clipped at both ends, a window wider than T, window 0 (each token sees only itself), global
// tokens (Longformer: they see and are seen by every position) and random links (BigBird: the
// dense mask built from the same link list).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/random_links.h"
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
      int64_t links = 0;  // random links per row (BigBird)
    };
    // Global tokens at the ends, in the middle, inside another's band, repeated, with window 0
    // and with a window wider than T (then every global key is already in the band).
    const std::vector<Case> cases = {
        Case{23, 3, false}, Case{23, 3, true}, Case{6, 9, false}, Case{6, 9, true},
        Case{11, 0, false}, Case{11, 0, true}, Case{40, 7, true}, Case{23, 3, false, {0}},
        Case{23, 3, true, {0, 22}}, Case{23, 2, false, {5, 6, 17}}, Case{23, 2, true, {11, 5, 11}},
        Case{11, 0, false, {4}}, Case{11, 0, true, {0, 10}}, Case{6, 9, false, {2}},
        Case{30, 4, true, {29}},
        // Random links: more than some rows can have (causal rows
        // near the start, a wide band), with globals and without.
        Case{23, 3, false, {}, 2}, Case{23, 3, true, {}, 3}, Case{23, 2, false, {5, 6, 17}, 4},
        Case{23, 2, true, {0, 11}, 2}, Case{11, 0, false, {4}, 9}, Case{9, 3, false, {}, 3},
        Case{40, 7, true, {3}, 5},
        // Several of the op's 32-row blocks, a window wider than a block, globals and links.
        Case{100, 9, false, {3, 60}, 4}, Case{97, 5, true, {50}, 2}, Case{70, 40, false},
        Case{70, 40, true, {33}}};
    for (const Case& c : cases) {
      INFO("t=", c.t, " window=", c.window, " causal=", c.causal, " globals=", c.globals.size(),
           " links=", c.links);
      const RandomLinks links =
          draw_random_links(c.t, c.window, c.causal, c.globals, c.links, 100 + c.t);
      Generator gen(c.t * 10 + c.window);
      const int64_t d = 8, dv = 5;
      const std::vector<Tensor> in = {Tensor::randn({2, 3, c.t, d}, gen),
                                      Tensor::randn({2, 3, c.t, d}, gen),
                                      Tensor::randn({2, 3, c.t, dv}, gen)};
      const Tensor gy = Tensor::randn({2, 3, c.t, dv}, gen);
      const Run band = run(in, gy, [&](const Var& q, const Var& k, const Var& v) {
        return banded_attention(q, k, v, c.window, c.causal, 0, c.globals, links);
      });
      const Run dense = run(in, gy, [&](const Var& q, const Var& k, const Var& v) {
        SdpaOptions opt;
        opt.masks.attn_mask = sliding_window_mask(c.t, c.window, c.causal, c.globals, links);
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

  TEST_CASE("random links follow the rule, fill what they can, and are reproducible") {
    struct Case {
      int64_t t, window;
      bool causal;
      std::vector<int64_t> globals;
      int64_t per_row;
    };
    for (const Case& c : {Case{50, 4, false, {}, 3}, Case{50, 4, true, {7, 30}, 3},
                          Case{12, 4, false, {0}, 6}, Case{30, 2, true, {}, 40}}) {
      INFO("t=", c.t, " window=", c.window, " causal=", c.causal, " per_row=", c.per_row);
      const RandomLinks l = draw_random_links(c.t, c.window, c.causal, c.globals, c.per_row, 5);
      REQUIRE(l.rows() == c.t);
      auto global = [&](int64_t j) {
        return std::find(c.globals.begin(), c.globals.end(), j) != c.globals.end();
      };
      for (int64_t i = 0; i < c.t; ++i) {
        // The keys row i may link to, listed the slow way.
        int64_t allowed = 0;
        for (int64_t j = 0; j < c.t; ++j)
          allowed += !global(j) && (c.causal ? i - j > c.window : std::abs(i - j) > c.window);
        if (global(i)) allowed = 0;
        std::vector<int64_t> row;
        for (int64_t n = 0; n < c.per_row; ++n)
          if (l.key(i, n) >= 0) row.push_back(l.key(i, n));
        CHECK(static_cast<int64_t>(row.size()) == std::min(c.per_row, allowed));
        CHECK(std::is_sorted(row.begin(), row.end()));
        CHECK(std::adjacent_find(row.begin(), row.end()) == row.end());
        for (int64_t j : row) {
          CHECK(!global(j));
          CHECK((c.causal ? i - j > c.window : std::abs(i - j) > c.window));
        }
      }
      CHECK(draw_random_links(c.t, c.window, c.causal, c.globals, c.per_row, 5).keys == l.keys);
    }
    // Different seeds draw different links, and the links spread over the sequence: 600 uniform
    // draws among ~190 allowed keys per row miss a given key with odds about e^-3 (~9 misses
    // expected), so more than 150 of the 200 keys are hit.
    const RandomLinks a = draw_random_links(200, 4, false, {}, 3, 1);
    CHECK(draw_random_links(200, 4, false, {}, 3, 2).keys != a.keys);
    std::vector<char> hit(200, 0);
    for (int64_t j : a.keys) hit[static_cast<size_t>(j)] = 1;
    CHECK(std::count(hit.begin(), hit.end(), 1) > 150);
  }

  TEST_CASE("banded attention refuses random links that break the rule") {
    Generator gen(4);
    const int64_t t = 12;
    Var q = Var::parameter(Tensor::randn({1, 1, t, 4}, gen));
    auto links_with = [&](int64_t row, int64_t key, int64_t key2 = -1) {
      RandomLinks l{2, std::vector<int64_t>(2 * t, -1)};
      l.keys[static_cast<size_t>(2 * row)] = key;
      l.keys[static_cast<size_t>(2 * row + 1)] = key2;
      return l;
    };
    CHECK_NOTHROW(banded_attention(q, q, q, 2, false, 0, {}, links_with(5, 9)));
    CHECK_THROWS_AS(banded_attention(q, q, q, 2, false, 0, {}, links_with(5, 7)), Error);  // band
    CHECK_THROWS_AS(banded_attention(q, q, q, 2, false, 0, {9}, links_with(5, 9)),
                    Error);  // global
    CHECK_THROWS_AS(banded_attention(q, q, q, 2, false, 0, {5}, links_with(5, 9)), Error);  // row
    CHECK_THROWS_AS(banded_attention(q, q, q, 2, true, 0, {}, links_with(5, 9)), Error);  // future
    CHECK_THROWS_AS(banded_attention(q, q, q, 2, false, 0, {}, links_with(5, 9, 9)), Error);
    CHECK_THROWS_AS(banded_attention(q, q, q, 2, false, 0, {}, links_with(5, t)), Error);
    CHECK_THROWS_AS(banded_attention(q, q, q, 2, false, 0, {}, RandomLinks{2, {1, 2}}), Error);
    tape().clear();
  }
}

}  // namespace attn::nn
