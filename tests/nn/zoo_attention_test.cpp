// attention-zoo's layers against their definitions: Reformer's LSH attention with one chunk
// equals dense shared-QK attention (self hidden), Linformer with identity projections equals
// softmax attention, dual chunk attention equals plain RoPE within the training length and keeps
// every distance below it beyond, rope_at equals the rope op, and the causal layers' outputs do
// not depend on later positions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "autograd/functional.h"
#include "nn/attention/dual_chunk_attention.h"
#include "nn/attention/linformer_attention.h"
#include "nn/attention/lsh_attention.h"
#include "nn/attention/sdpa.h"
#include "nn/attention/synthesizer_attention.h"
#include "nn/positional/rope.h"

namespace attn::nn {

namespace {

// y and the gradient of sum(y * gy) with respect to x.
struct Run {
  Tensor y, dx;
};

Run run(const std::function<Var(const Var&)>& f, const Tensor& x, const Tensor& gy) {
  Var leaf = Var::parameter(x.clone());
  Var y = f(leaf);
  y.backward(gy);
  return {y.value().clone(), leaf.grad().clone()};
}

// Shared-QK attention written densely: k = qk / |qk|, a query's own score replaced by -1e5, the
// keys after it hidden when causal — what LshAttention computes when one chunk holds everything.
Var dense_shared_qk(const LshAttention& m, const Var& x, int64_t heads, bool causal) {
  const int64_t t = x.size(1);
  const Var qk = split_heads(m.qk_proj->forward(x), heads);  // (B,H,T,Dh)
  const Var v = split_heads(m.v_proj->forward(x), heads);
  const Var k = div(qk, sqrt(add_scalar(sum(mul(qk, qk), 3, true), 1e-6f)));
  Tensor self({t, t}), hidden({t, t});
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < t; ++j) self[i * t + j] = i == j, hidden[i * t + j] = causal && j > i;
  const real scale = static_cast<real>(1 / std::sqrt(static_cast<double>(qk.size(3))));
  const Var s = masked_fill(matmul(qk, k, false, true, scale), self, -1e5f);
  return m.out_proj->forward(merge_heads(matmul(masked_weights(s, hidden), v)));
}

// Changes x at positions >= from and reports the largest change of y before `from`.
double change_before(const std::function<Var(const Var&)>& f, Tensor x, int64_t from) {
  const Tensor y0 = f(Var(x)).value().clone();
  const int64_t b = x.size(0), t = x.size(1), d = x.size(2);
  for (int64_t r = 0; r < b; ++r)
    for (int64_t i = from; i < t; ++i)
      for (int64_t c = 0; c < d; ++c) x[(r * t + i) * d + c] += 1.5f;
  const Tensor y1 = f(Var(x)).value();
  double worst = 0;
  for (int64_t r = 0; r < b; ++r)
    for (int64_t i = 0; i < from; ++i)
      for (int64_t c = 0; c < d; ++c) {
        const int64_t at = (r * t + i) * d + c;
        worst = std::max(worst, std::abs(static_cast<double>(y1[at] - y0[at])));
      }
  return worst;
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("LSH attention with one chunk equals dense shared-QK attention, values and gradients") {
    for (const bool causal : {false, true}) {
      INFO("causal=", causal);
      Generator gen(31);
      LshAttention m(8, 2, /*n_buckets=*/4, /*chunk=*/16, gen, causal);
      const Tensor x = Tensor::randn({2, 11, 8}, gen), gy = Tensor::randn({2, 11, 8}, gen);
      const Run a = run([&](const Var& v) { return m.forward(v); }, x, gy);
      const Run b = run([&](const Var& v) { return dense_shared_qk(m, v, 2, causal); }, x, gy);
      CHECK(max_abs_diff(a.y, b.y) <= 1e-5);
      CHECK(max_abs_diff(a.dx, b.dx) <= 1e-4);
    }
  }

  TEST_CASE("LSH layout: a permutation sorted by bucket, and its inverse") {
    Generator gen(5);
    LshAttention m(8, 2, 6, 3, gen);
    m.forward(Var(Tensor::randn({2, 13, 8}, gen)));
    const LshLayout& l = m.last_layout();
    REQUIRE(l.rows == 4);
    CHECK(l.n_chunks == 5);
    for (int64_t r = 0; r < l.rows; ++r) {
      std::vector<int64_t> sorted = l.order[r];
      std::sort(sorted.begin(), sorted.end());
      std::vector<int64_t> all(13);
      std::iota(all.begin(), all.end(), 0);
      CHECK(sorted == all);
      for (int64_t s = 0; s < 13; ++s) {
        CHECK(l.slot_of[r][l.order[r][s]] == s);
        if (s > 0) CHECK(l.bucket[r][l.order[r][s - 1]] <= l.bucket[r][l.order[r][s]]);
        CHECK(l.bucket[r][s] >= 0);
        CHECK(l.bucket[r][s] < 6);
      }
    }
  }

  TEST_CASE("Linformer with identity projections (k = T) is softmax attention") {
    Generator gen(7);
    LinformerAttention m(8, 2, /*max_len=*/6, /*k=*/6, gen);
    for (Var* p : {&m.e_proj, &m.f_proj}) {
      Tensor& e = p->value();
      for (int64_t i = 0; i < 6; ++i)
        for (int64_t j = 0; j < 6; ++j) e[i * 6 + j] = i == j;
    }
    const Var x(Tensor::randn({2, 6, 8}, gen));
    const HeadsQKV a = m.project(x);
    const Var ref = m.combine(scaled_dot_product_attention(a.q, a.k, a.v).out);
    CHECK(max_abs_diff(m.forward(x).value(), ref.value()) <= 1e-5);
  }

  TEST_CASE("rope_at with positions 0..T-1 equals the rope op (rotate-half)") {
    Generator gen(9);
    const Var x(Tensor::randn({2, 3, 7, 8}, gen));
    std::vector<int64_t> pos(7);
    std::iota(pos.begin(), pos.end(), 0);
    CHECK(max_abs_diff(rope_at(x, pos).value(), apply_rope(x, 0, RopeStyle::kRotateHalf).value()) <=
          1e-5);
  }

  TEST_CASE("DCA distances: exact nearby, never beyond the training length") {
    const int64_t l = 16, s = 8, t = 100;
    const Tensor d = dual_chunk_distances(t, l, s);
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j <= i; ++j) {
        const real got = d[i * t + j];
        CHECK(got >= 0);
        CHECK(got <= l - 1);
        if (i / s - j / s <= 1) CHECK(got == static_cast<real>(i - j));  // s = L/2: no cap
      }
    // A smaller chunk: the successive-chunk distance is capped at L - 1.
    const Tensor e = dual_chunk_distances(40, 16, 10);
    CHECK(e[19 * 40 + 0] == 15);  // i = 19, j = 0: 10 + 9 - 0 = 19, capped to 15
  }

  TEST_CASE("DCA equals plain RoPE attention within the training length, and differs beyond") {
    Generator gen(11);
    RopeAttention m(8, 2, gen, /*train_len=*/12);
    const auto with = [&](RopePositions p) {
      return [&m, p](const Var& v) {
        m.set_positions(p);
        return m.forward(v);
      };
    };
    const Tensor x = Tensor::randn({2, 12, 8}, gen), gy = Tensor::randn({2, 12, 8}, gen);
    const Run plain = run(with(RopePositions::kPlain), x, gy);
    const Run dca = run(with(RopePositions::kDualChunk), x, gy);
    CHECK(max_abs_diff(plain.y, dca.y) <= 1e-5);
    CHECK(max_abs_diff(plain.dx, dca.dx) <= 1e-4);
    const Tensor longer = Tensor::randn({2, 30, 8}, gen);
    CHECK(max_abs_diff(with(RopePositions::kPlain)(Var(longer)).value(),
                       with(RopePositions::kDualChunk)(Var(longer)).value()) > 1e-3);
  }

  TEST_CASE("the causal zoo layers ignore later positions") {
    Generator gen(13);
    LshAttention lsh(8, 2, 4, 3, gen, /*causal=*/true);
    DenseSynthesizer dense(8, 2, 10, gen, true);
    RandomSynthesizer rnd(8, 2, 10, gen, true);
    RopeAttention dca(8, 2, gen, 6, 0, RopePositions::kDualChunk);
    const Tensor x = Tensor::randn({2, 10, 8}, gen);
    // LSH: changing a later token may move it into another bucket and so change which earlier
    // keys share a chunk with an earlier query (the layout depends on the whole sequence, as in
    // Reformer); what the mask guarantees is that, for the layout drawn, no earlier output reads
    // a later position: the gradient of outputs before t = 6 on inputs from 6 on is zero.
    Tensor gy = Tensor::randn({2, 10, 8}, gen);
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t i = 6 * 8; i < 10 * 8; ++i) gy[r * 80 + i] = 0;
    const Run g = run([&](const Var& v) { return lsh.forward(v); }, x, gy);
    double later = 0;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t i = 6 * 8; i < 10 * 8; ++i)
        later = std::max(later, std::abs(double(g.dx[r * 80 + i])));
    CHECK(later == 0);
    CHECK(change_before([&](const Var& v) { return dense.forward(v); }, x, 6) <= 1e-6);
    CHECK(change_before([&](const Var& v) { return rnd.forward(v); }, x, 6) <= 1e-6);
    CHECK(change_before([&](const Var& v) { return dca.forward(v); }, x, 6) <= 1e-6);
  }

  TEST_CASE("random synthesizer: the same rows for every input, zero above the diagonal") {
    Generator gen(17);
    RandomSynthesizer rnd(8, 2, 10, gen, true);
    const Tensor a = rnd.weights(7).value();  // (H,T,T)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 7; ++i) {
        double row = 0;
        for (int64_t j = 0; j < 7; ++j) {
          row += a[(h * 7 + i) * 7 + j];
          if (j > i) CHECK(a[(h * 7 + i) * 7 + j] == 0);
        }
        CHECK(row == doctest::Approx(1.0).epsilon(1e-5));
      }
  }
}

}  // namespace attn::nn
