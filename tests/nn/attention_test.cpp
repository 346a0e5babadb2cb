// Attention: masks, causality through the tape, KV cache, GQA/MQA equivalences, equivariance.
#include <doctest/doctest.h>

#include <algorithm>
#include <tuple>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/attention/multihead_attention.h"
#include "nn/attention/sdpa.h"

namespace attn::nn {

namespace {

// Rows [lo, hi) of x (B,T,C) along T.
Tensor time_slice(const Tensor& x, int64_t lo, int64_t hi) {
  return slice(Var::constant(x), 1, lo, hi).value();
}

// PyTorch-style GQA reference weights: the (Hkv*D, E) rows of a k/v projection repeated so that
// query head h reads key head h / g, giving a (H*D, E) matrix for ordinary MHA.
Tensor repeat_kv_rows(const Tensor& w, int64_t hkv, int64_t g, int64_t d) {
  const int64_t e = w.size(1);
  Tensor out({hkv * g * d, e});
  for (int64_t kh = 0; kh < hkv; ++kh)
    for (int64_t j = 0; j < g; ++j)
      std::copy_n(w.data() + kh * d * e, d * e, out.data() + (kh * g + j) * d * e);
  return out;
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("sdpa: rows sum to 1, hidden keys get weight exactly 0") {
    Generator gen(1);
    Var q(Tensor::randn({2, 2, 3, 4}, gen)), k(Tensor::randn({2, 2, 5, 4}, gen)),
        v(Tensor::randn({2, 2, 5, 4}, gen));
    SdpaOptions opt;
    opt.masks.key_padding_mask = Tensor::from_vector({2, 5}, {0, 0, 0, 0, 1, 0, 0, 1, 1, 1});
    opt.masks.causal = true;  // queries are the last 3 of 5 positions: query i sees j <= i + 2
    const Tensor w = scaled_dot_product_attention(q, k, v, opt).weights.value();
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t i = 0; i < 3; ++i) {
          double total = 0;
          for (int64_t j = 0; j < 5; ++j) {
            const real wij = w.at({b, h, i, j});
            total += wij;
            const bool hidden = j > i + 2 || (b == 0 && j == 4) || (b == 1 && j >= 2);
            if (hidden)
              CHECK(wij == 0);
            else
              CHECK(wij > 0);
          }
          CHECK(total == doctest::Approx(1.0));
        }
  }

  TEST_CASE("sdpa: a query with every key hidden attends uniformly (documented)") {
    Generator gen(2);
    Var q(Tensor::randn({1, 1, 2, 4}, gen)), k(Tensor::randn({1, 1, 3, 4}, gen)),
        v(Tensor::randn({1, 1, 3, 4}, gen));
    SdpaOptions opt;
    opt.masks.attn_mask = Tensor::from_vector({2, 3}, {1, 1, 1, 0, 0, 1});
    const Tensor w = scaled_dot_product_attention(q, k, v, opt).weights.value();
    for (int64_t j = 0; j < 3; ++j) CHECK(w.at({0, 0, 0, j}) == doctest::Approx(1.0 / 3));
    CHECK(w.at({0, 0, 1, 2}) == 0);
    opt.masks.attn_mask = Tensor::zeros({3, 2});
    CHECK_THROWS_AS(scaled_dot_product_attention(q, k, v, opt), Error);
  }

  TEST_CASE("sdpa: the fused path equals the same mask given as attn_mask") {
    // No mask, or masks.causal alone, runs attention_weights + tril_matmul; the same boolean
    // attn_mask (all zeros when there is no mask) takes the general path (full scores, masked
    // softmax, matmul). Outputs, weights and every gradient must agree, with and without dropout,
    // at lengths crossing row blocks, with grouped heads (4 query heads on hkv key heads).
    for (auto row : {std::tuple{5, 5, 0.0, 4, true},
                     {40, 40, 0.0, 4, true},
                     {3, 37, 0.0, 4, true},
                     {33, 33, 0.3, 4, true},
                     {40, 40, 0.0, 2, true},
                     {3, 20, 0.0, 1, true},
                     {33, 32, 0.0, 4, false},
                     {7, 40, 0.3, 2, false}}) {
      // Plain locals, not a structured binding: clang 14 cannot capture bindings in lambdas.
      const int tq = std::get<0>(row), tk = std::get<1>(row), hkv = std::get<3>(row);
      const double p = std::get<2>(row);
      const bool causal = std::get<4>(row);
      CAPTURE(tq);
      CAPTURE(tk);
      CAPTURE(hkv);
      CAPTURE(causal);
      Generator gen(7);
      Tensor qt = Tensor::randn({2, 4, tq, 8}, gen), kt = Tensor::randn({2, hkv, tk, 8}, gen),
             vt = Tensor::randn({2, hkv, tk, 8}, gen), dy = Tensor::randn({2, 4, tq, 8}, gen);
      Tensor hidden({tq, tk});
      for (int64_t i = 0; causal && i < tq; ++i)
        for (int64_t j = i + tk - tq + 1; j < tk; ++j) hidden.at({i, j}) = 1;
      auto run = [&](bool fast) {
        Var q = Var::parameter(qt), k = Var::parameter(kt), v = Var::parameter(vt);
        Generator drop(11);
        SdpaOptions opt{.dropout_p = p, .dropout_gen = &drop, .training = p > 0};
        if (fast)
          opt.masks.causal = causal;
        else
          opt.masks.attn_mask = hidden;
        AttentionOutput a = scaled_dot_product_attention(q, k, v, opt);
        a.out.backward(dy);
        return std::vector{a.out.value(), a.weights.value(), q.grad(), k.grad(), v.grad()};
      };
      const std::vector<Tensor> fast = run(true), general = run(false);
      for (size_t i = 0; i < fast.size(); ++i) {
        CAPTURE(i);
        CHECK(max_abs_diff(fast[i], general[i]) < 1e-5);
      }
    }
  }

  TEST_CASE("causal self-attention: dy_t/dx_{t+k} is exactly 0, through the tape") {
    Generator gen(3);
    MultiheadAttentionOptions o;
    o.n_kv_heads = 1;
    o.rope = RopeStyle::kInterleaved;
    MultiheadAttention mha(8, 2, gen, o);
    Var x(Tensor::randn({2, 5, 8}, gen), true);
    for (int64_t t = 0; t < 5; ++t)
      for (int64_t c : {0, 5}) {
        x.zero_grad();
        Var y = mha.forward(x, x, x, {.causal = true}).out;
        Tensor dy(y.shape());
        dy.at({1, t, c}) = 1;
        y.backward(dy);
        const Tensor& g = x.grad();
        double past = 0;
        for (int64_t s = 0; s < 5; ++s)
          for (int64_t e = 0; e < 8; ++e) {
            CHECK(g.at({0, s, e}) == 0);  // other batch entry
            if (s > t)
              CHECK(g.at({1, s, e}) == 0);
            else
              past += std::abs(g.at({1, s, e}));
          }
        CHECK(past > 0);
      }
  }

  TEST_CASE("KV-cache decoding equals full recomputation (MHA, GQA + RoPE)") {
    for (int64_t hkv : {4, 2}) {
      Generator gen(4);
      MultiheadAttentionOptions o;
      o.n_kv_heads = hkv;
      if (hkv == 2) o.rope = RopeStyle::kRotateHalf;
      MultiheadAttention mha(16, 4, gen, o);
      Tensor x = Tensor::randn({2, 6, 16}, gen);
      const Tensor full = mha.forward(Var(x), Var(x), Var(x), {.causal = true}).out.value();
      KVCache cache;
      NoGrad off;
      for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, 3}, {3, 4}, {4, 5}, {5, 6}}) {
        Var step(time_slice(x, lo, hi));
        const Tensor y = mha.forward(step, step, step, {.causal = true}, &cache).out.value();
        CHECK(max_abs_diff(y, time_slice(full, lo, hi)) < 1e-5);
        CHECK(cache.length() == hi);
      }
    }
  }

  TEST_CASE("cross-attention with a fixed cache reuses the memory's keys and values") {
    Generator gen(5);
    MultiheadAttention mha(8, 2, gen);
    Var mem(Tensor::randn({1, 4, 8}, gen)), y(Tensor::randn({1, 2, 8}, gen));
    const Tensor ref = mha.forward(y, mem, mem).out.value();
    KVCache cache;
    cache.fixed = true;
    mha.forward(y, mem, mem, {}, &cache);
    const Tensor again = mha.forward(y, Var(), Var(), {}, &cache).out.value();
    CHECK(max_abs_diff(ref, again) < 1e-6);
  }

  TEST_CASE("GQA with n_kv_heads == num_heads equals MHA (separate vs packed weights)") {
    Generator gen(6);
    MultiheadAttention packed(8, 2, gen);
    MultiheadAttentionOptions o;
    o.separate_projections = true;
    MultiheadAttention sep(8, 2, gen, o);
    CHECK(packed.named_parameters()[0].first == "in_proj_weight");
    CHECK(sep.named_parameters()[0].first == "q_proj.weight");
    Generator noise(7);
    for (Var& p : packed.parameters()) p.value().copy_from(Tensor::randn(p.shape(), noise, 0.5));
    const Tensor& w = packed.in_proj_weight.value();
    const Tensor& b = packed.in_proj_bias.value();
    std::shared_ptr<Linear> parts[3] = {sep.q_proj, sep.k_proj, sep.v_proj};
    for (int i = 0; i < 3; ++i) {
      std::copy_n(w.data() + i * 64, 64, parts[i]->weight.value().data());
      std::copy_n(b.data() + i * 8, 8, parts[i]->bias.value().data());
    }
    sep.out_proj->weight.value().copy_from(packed.out_proj->weight.value());
    sep.out_proj->bias.value().copy_from(packed.out_proj->bias.value());
    Var x(Tensor::randn({2, 3, 8}, gen)), m(Tensor::randn({2, 4, 8}, gen));
    CHECK(max_abs_diff(packed.forward(x, x, x).out.value(), sep.forward(x, x, x).out.value()) <
          1e-5);
    CHECK(max_abs_diff(packed.forward(x, m, m).out.value(), sep.forward(x, m, m).out.value()) <
          1e-5);
  }

  TEST_CASE("GQA equals MHA whose key/value heads are repeated copies") {
    Generator gen(8);
    MultiheadAttentionOptions o;
    o.n_kv_heads = 2;
    MultiheadAttention gqa(16, 4, gen, o);  // D = 4, g = 2
    MultiheadAttention mha(16, 4, gen);
    Generator noise(9);
    for (Var& p : gqa.parameters()) p.value().copy_from(Tensor::randn(p.shape(), noise, 0.5));
    Tensor w = mha.in_proj_weight.value(), b = mha.in_proj_bias.value();
    std::copy_n(gqa.q_proj->weight.value().data(), 256, w.data());
    std::copy_n(gqa.q_proj->bias.value().data(), 16, b.data());
    Tensor kw = repeat_kv_rows(gqa.k_proj->weight.value(), 2, 2, 4);
    Tensor vw = repeat_kv_rows(gqa.v_proj->weight.value(), 2, 2, 4);
    Tensor kb = repeat_kv_rows(gqa.k_proj->bias.value().reshape({8, 1}), 2, 2, 4);
    Tensor vb = repeat_kv_rows(gqa.v_proj->bias.value().reshape({8, 1}), 2, 2, 4);
    std::copy_n(kw.data(), 256, w.data() + 256);
    std::copy_n(vw.data(), 256, w.data() + 512);
    std::copy_n(kb.data(), 16, b.data() + 16);
    std::copy_n(vb.data(), 16, b.data() + 32);
    mha.out_proj->weight.value().copy_from(gqa.out_proj->weight.value());
    mha.out_proj->bias.value().copy_from(gqa.out_proj->bias.value());
    Var x(Tensor::randn({2, 3, 16}, gen));
    auto a = gqa.forward(x, x, x, {.causal = true});
    auto r = mha.forward(x, x, x, {.causal = true});
    CHECK(max_abs_diff(a.out.value(), r.out.value()) < 1e-5);
    CHECK(max_abs_diff(a.weights.value(), r.weights.value()) < 1e-6);
  }

  TEST_CASE("head mask: an ablated head contributes nothing and gets no gradient") {
    Generator gen(5);
    MultiheadAttention mha(8, 2, gen);  // head_dim 4: head 2 owns columns 4..7
    const Var x(Tensor::randn({2, 3, 8}, gen));
    const Tensor full = mha.forward(x, x, x).out.value();
    mha.set_head_mask(Tensor::from_vector({1, 0}));
    const Tensor masked = mha.forward(x, x, x).out.value();
    // Head 2's value rows (in_proj rows 2E + 4 .. 3E) changed at random: nothing moves.
    Tensor& w = mha.in_proj_weight.value();
    for (int64_t r = 16 + 4; r < 24; ++r)
      for (int64_t c = 0; c < 8; ++c) w[r * 8 + c] += 1.5f * static_cast<real>(r - c);
    const Tensor after = mha.forward(x, x, x).out.value();
    CHECK(max_abs_diff(after, masked) == 0);
    CHECK(max_abs_diff(full, masked) > 1e-3);  // the head did contribute before
    // ... and no gradient reaches head 2's query, key or value rows.
    mha.zero_grad();
    sum(mha.forward(x, x, x).out).backward();
    const Tensor& g = mha.in_proj_weight.grad();
    double head2 = 0, head1 = 0;
    for (int64_t part = 0; part < 3; ++part)
      for (int64_t r = 0; r < 8; ++r)
        for (int64_t c = 0; c < 8; ++c)
          (r < 4 ? head1 : head2) += std::abs(g[(part * 8 + r) * 8 + c]);
    CHECK(head2 == 0);
    CHECK(head1 > 0);
    // All ones is the unmasked layer; clearing the mask restores it.
    mha.set_head_mask(Tensor::from_vector({1, 1}));
    const Tensor ones = mha.forward(x, x, x).out.value();
    mha.set_head_mask(std::nullopt);
    CHECK(max_abs_diff(ones, mha.forward(x, x, x).out.value()) == 0);
    CHECK_THROWS_WITH_AS(mha.set_head_mask(Tensor::from_vector({1, 0, 1})),
                         doctest::Contains("head mask must be (2) for 2 heads, got (3)"), Error);
  }

  TEST_CASE("weights hook: identity changes nothing, uniform weights equalise the queries") {
    Generator gen(6);
    MultiheadAttention mha(8, 2, gen);
    const Var x(Tensor::randn({2, 5, 8}, gen));
    const Tensor plain = mha.forward(x, x, x).out.value();
    const Tensor plain_w = mha.last_weights();
    mha.set_weights_hook([](const Var& w, const Var&) { return w; });
    CHECK(max_abs_diff(mha.forward(x, x, x).out.value(), plain) < 1e-5);
    // Uniform rows: every query reads the mean value, so all 5 output rows are equal, and
    // last_weights() still shows the model's own weights.
    mha.set_weights_hook(
        [](const Var& w, const Var&) { return Var(Tensor::full(w.shape(), real(1) / 5)); });
    const Tensor u = mha.forward(x, x, x).out.value();
    CHECK(max_abs_diff(mha.last_weights(), plain_w) < 1e-6);
    double spread = 0;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t t = 1; t < 5; ++t)
        for (int64_t c = 0; c < 8; ++c)
          spread = std::max(spread, std::abs(double(u[(b * 5 + t) * 8 + c] - u[b * 5 * 8 + c])));
    CHECK(spread < 1e-5);
    CHECK(max_abs_diff(u, plain) > 1e-3);
    mha.set_weights_hook([](const Var& w, const Var&) {
      return Var(Tensor::zeros({w.size(0), w.size(1)}));
    });
    CHECK_THROWS_WITH_AS(mha.forward(x, x, x), doctest::Contains("the weights hook returned"),
                         Error);
    mha.set_weights_hook(nullptr);
    CHECK(max_abs_diff(mha.forward(x, x, x).out.value(), plain) == 0);
    MultiheadAttentionOptions o;
    o.n_kv_heads = 1;
    MultiheadAttention mqa(8, 2, gen, o);
    CHECK_THROWS_WITH_AS(mqa.set_weights_hook([](const Var& w, const Var&) { return w; }),
                         doctest::Contains("needs n_kv_heads == num_heads"), Error);
  }

  TEST_CASE("self-attention without positions is permutation equivariant") {
    Generator gen(10);
    MultiheadAttention mha(8, 2, gen);
    Tensor x = Tensor::randn({1, 5, 8}, gen);
    const int64_t perm[5] = {3, 0, 4, 1, 2};
    Tensor xp(x.shape());
    for (int64_t t = 0; t < 5; ++t) std::copy_n(x.data() + perm[t] * 8, 8, xp.data() + t * 8);
    const Tensor y = mha.forward(Var(x), Var(x), Var(x)).out.value();
    const Tensor yp = mha.forward(Var(xp), Var(xp), Var(xp)).out.value();
    for (int64_t t = 0; t < 5; ++t)
      for (int64_t c = 0; c < 8; ++c)
        CHECK(yp.at({0, t, c}) == doctest::Approx(y.at({0, perm[t], c})).epsilon(1e-5));
  }

  TEST_CASE("batch_first=false and unbatched inputs give the batch-first result") {
    Generator gen(11);
    MultiheadAttentionOptions o;
    o.batch_first = false;
    MultiheadAttention seq_first(8, 2, gen, o);
    Tensor x = Tensor::randn({1, 3, 8}, gen);
    Var xt = Var(x.reshape({3, 1, 8}));  // (T,B,E) with B = 1 has the same memory layout
    const Tensor a = seq_first.forward(xt, xt, xt).out.value();
    Var xu = Var(x.reshape({3, 8}));
    const Tensor u = seq_first.forward(xu, xu, xu).out.value();
    CHECK(a.shape() == Shape{3, 1, 8});
    CHECK(u.shape() == Shape{3, 8});
    CHECK(max_abs_diff(a.reshape({3, 8}), u) < 1e-6);
  }
}

}  // namespace attn::nn
