// The attention variants against their definitions: blockwise == naive softmax attention
// (values and gradients), linear attention's parallel == recurrent forms, the sliding-window
// mask (and its use in the decoder-only model), and the llama block (KV cache, causality, kernels,
// GQA).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "autograd/mode.h"
#include "nn/attention/blockwise_attention.h"
#include "nn/attention/linear_attention.h"
#include "nn/attention/sdpa.h"
#include "nn/attention/sliding_window.h"
#include "nn/transformer/decoder_only.h"
#include "nn/transformer/llama_block.h"

#include "tests/nn/run_with_grads.h"

namespace attn::nn {

namespace {

// softmax(q k^T / sqrt(D)) v from primitives; causal hides j > i + Tk - Tq. GQA: k, v repeated.
Var naive_attention(const Var& q, const Var& k, const Var& v, bool causal) {
  const int64_t tq = q.size(2), tk = k.size(2), group = q.size(1) / k.size(1);
  Var kk = k, vv = v;
  if (group > 1) {  // kv head j serves query heads j*group .. j*group+group-1
    std::vector<Var> ks, vs;
    for (int64_t j = 0; j < k.size(1); ++j)
      for (int64_t g = 0; g < group; ++g)
        ks.push_back(slice(k, 1, j, j + 1)), vs.push_back(slice(v, 1, j, j + 1));
    kk = concat(ks, 1), vv = concat(vs, 1);
  }
  Var s = mul_scalar(matmul(q, kk, false, true), real(1 / std::sqrt(double(q.size(3)))));
  if (causal) {
    Tensor hide({tq, tk});
    for (int64_t i = 0; i < tq; ++i)
      for (int64_t j = 0; j < tk; ++j) hide[i * tk + j] = j > i + tk - tq;
    s = masked_fill(s, hide, -1e30f);
  }
  return matmul(softmax(s), vv);
}

using test::Grads;
using test::run_with_grads;

void check_close(const Grads& a, const Grads& b, double tol) {
  CHECK(max_abs_diff(a.y, b.y) <= tol);
  REQUIRE(a.d.size() == b.d.size());
  for (size_t i = 0; i < a.d.size(); ++i) {
    INFO("gradient of input ", i);
    CHECK(max_abs_diff(a.d[i], b.d[i]) <= tol);
  }
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("blockwise attention equals naive softmax attention, values and gradients") {
    struct Case {
      int64_t hq, hkv, tq, tk, block;
      bool causal;
    };
    // T not a multiple of the block; one block; blocks of 1; more keys than queries; GQA + cache.
    for (const Case c :
         {Case{2, 2, 37, 37, 8, false}, Case{2, 2, 37, 37, 8, true}, Case{2, 2, 37, 37, 64, true},
          Case{2, 2, 9, 9, 1, true}, Case{2, 2, 13, 29, 5, false}, Case{4, 2, 6, 21, 4, true},
          Case{4, 1, 21, 21, 16, true}}) {
      INFO("hq=", c.hq, " hkv=", c.hkv, " tq=", c.tq, " tk=", c.tk, " block=", c.block,
           " causal=", c.causal);
      Generator gen(c.tq * 100 + c.block);
      const int64_t d = 8;
      const std::vector<Tensor> in = {Tensor::randn({2, c.hq, c.tq, d}, gen),
                                      Tensor::randn({2, c.hkv, c.tk, d}, gen),
                                      Tensor::randn({2, c.hkv, c.tk, d}, gen)};
      const Tensor gy = Tensor::randn({2, c.hq, c.tq, d}, gen);
      const Grads fast = run_with_grads(in, gy, [&](const std::vector<Var>& v) {
        return blockwise_attention(v[0], v[1], v[2], c.causal, c.block);
      });
      const Grads slow = run_with_grads(in, gy, [&](const std::vector<Var>& v) {
        return naive_attention(v[0], v[1], v[2], c.causal);
      });
      check_close(fast, slow, 1e-5);
    }
  }

  TEST_CASE("blockwise backward split over key blocks (one head, several threads) equals naive") {
    // With fewer heads than threads the backward splits each head's key blocks across jobs,
    // each with its own dQ buffer; 3 threads give uneven ranges of the 5 key blocks.
    const int before = num_threads();
    for (const int threads : {2, 3})
      for (const bool causal : {false, true}) {
        INFO("threads=", threads, " causal=", causal);
        set_num_threads(threads);
        Generator gen(17 + threads);
        const std::vector<Tensor> in = {Tensor::randn({1, 1, 37, 8}, gen),
                                        Tensor::randn({1, 1, 37, 8}, gen),
                                        Tensor::randn({1, 1, 37, 8}, gen)};
        const Tensor gy = Tensor::randn({1, 1, 37, 8}, gen);
        const Grads fast = run_with_grads(in, gy, [&](const std::vector<Var>& v) {
          return blockwise_attention(v[0], v[1], v[2], causal, 8);
        });
        const Grads slow = run_with_grads(in, gy, [&](const std::vector<Var>& v) {
          return naive_attention(v[0], v[1], v[2], causal);
        });
        check_close(fast, slow, 1e-5);
      }
    set_num_threads(before);
  }

  TEST_CASE("blockwise attention equals sdpa (the library's reference attention)") {
    Generator gen(4);
    const Tensor q = Tensor::randn({1, 4, 19, 6}, gen), k = Tensor::randn({1, 2, 19, 6}, gen),
                 v = Tensor::randn({1, 2, 19, 6}, gen);
    SdpaOptions opt;
    opt.masks.causal = true;
    const Tensor ref =
        scaled_dot_product_attention(Var::constant(q), Var::constant(k), Var::constant(v), opt)
            .out.value();
    const Tensor got =
        blockwise_attention(Var::constant(q), Var::constant(k), Var::constant(v), true, 4).value();
    CHECK(max_abs_diff(got, ref) <= 1e-5);
  }

  TEST_CASE("blockwise attention keeps no T x T tensor on the tape") {
    Generator gen(6);
    const int64_t t = 256, d = 4;
    Var q = Var::parameter(Tensor::randn({1, 1, t, d}, gen));
    Var y = blockwise_attention(q, q, q, true, 32);
    // One record, and its output is (T,D): nothing quadratic was kept for backward.
    CHECK(tape().size() == 1);
    CHECK(tape().record(0).output.numel() == t * d);
    tape().clear();
    CHECK_THROWS_AS(blockwise_attention(q, slice(q, 2, 0, 10), slice(q, 2, 0, 10), true),
                    Error);  // causal needs Tq <= Tk
  }

  TEST_CASE("linear attention: causal parallel (prefix sums) == recurrent, values and gradients") {
    Generator gen(21);
    const std::vector<Tensor> in = {Tensor::randn({2, 2, 11, 4}, gen),
                                    Tensor::randn({2, 2, 11, 4}, gen),
                                    Tensor::randn({2, 2, 11, 3}, gen)};
    const Tensor gy = Tensor::randn({2, 2, 11, 3}, gen);
    const Grads par = run_with_grads(in, gy, [](const std::vector<Var>& v) {
      return linear_attention(v[0], v[1], v[2], /*causal=*/true);
    });
    const Grads rec = run_with_grads(in, gy, [](const std::vector<Var>& v) {
      return linear_attention_recurrent(v[0], v[1], v[2]);
    });
    check_close(par, rec, 1e-5);
    // ... and both equal the quadratic form: rows of tril(phi(Q) phi(K)^T), normalised, times V.
    const Grads quad = run_with_grads(in, gy, [](const std::vector<Var>& v) {
      const Var a = matmul(elu_feature_map(v[0]), elu_feature_map(v[1]), false, true);
      Tensor upper({11, 11});
      for (int64_t i = 0; i < 11; ++i)
        for (int64_t j = i + 1; j < 11; ++j) upper[i * 11 + j] = 1;
      const Var w = masked_fill(a, upper, 0);
      return div(matmul(w, v[2]), add_scalar(sum(w, -1, true), 1e-6f));
    });
    check_close(par, quad, 1e-5);
  }

  TEST_CASE("linear attention: non-causal parallel == readout of the final fast-weight state") {
    Generator gen(22);
    const std::vector<Tensor> in = {Tensor::randn({1, 2, 7, 4}, gen),
                                    Tensor::randn({1, 2, 9, 4}, gen),
                                    Tensor::randn({1, 2, 9, 5}, gen)};
    const Tensor gy = Tensor::randn({1, 2, 7, 5}, gen);
    const Grads par = run_with_grads(in, gy, [](const std::vector<Var>& v) {
      return linear_attention(v[0], v[1], v[2], /*causal=*/false);
    });
    // Feed all 9 keys into the recurrence, then every query reads the final S and z.
    const Grads rec = run_with_grads(in, gy, [](const std::vector<Var>& v) {
      FastWeightState st;
      for (int64_t t = 0; t < 9; ++t)
        linear_attention_step(slice(v[0], 2, 0, 1), slice(v[1], 2, t, t + 1),
                              slice(v[2], 2, t, t + 1), st);
      const Var fq = elu_feature_map(v[0]);
      return div(matmul(fq, st.s), add_scalar(matmul(fq, st.z, false, true), 1e-6f));
    });
    check_close(par, rec, 1e-5);
  }

  TEST_CASE("LinearAttention layer: forward == forward_recurrent, parameter gradients too") {
    Generator gen(23);
    LinearAttention la(8, 2, gen, /*causal=*/true);
    std::vector<std::string> names;
    for (auto& [n, p] : la.named_parameters()) names.push_back(n);
    CHECK(names == std::vector<std::string>{"q_proj.weight", "q_proj.bias", "k_proj.weight",
                                            "k_proj.bias", "v_proj.weight", "v_proj.bias",
                                            "out_proj.weight", "out_proj.bias"});
    const Tensor x = Tensor::randn({2, 6, 8}, gen), gy = Tensor::randn({2, 6, 8}, gen);
    auto grads = [&](bool recurrent) {
      la.zero_grad();
      Var y = recurrent ? la.forward_recurrent(Var::constant(x)) : la.forward(Var::constant(x));
      y.backward(gy);
      Grads g{y.value(), {}};
      for (const Var& p : la.parameters()) g.d.push_back(p.grad().clone());
      return g;
    };
    check_close(grads(false), grads(true), 1e-5);
    LinearAttention bidir(8, 2, gen, /*causal=*/false);
    CHECK_THROWS_AS(bidir.forward_recurrent(Var::constant(x)), Error);
  }

  TEST_CASE("sliding-window mask: band of half-width w, causal variant, global tokens") {
    const int64_t t = 9, w = 2;
    const Tensor m = sliding_window_mask(t, w);
    const Tensor mc = sliding_window_mask(t, w, /*causal=*/true);
    const Tensor mg = sliding_window_mask(t, w, false, {0, 5});
    const Tensor mgc = sliding_window_mask(t, w, true, {4});
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < t; ++j) {
        CAPTURE(i);
        CAPTURE(j);
        const bool band = std::abs(i - j) <= w;
        CHECK(m.at({i, j}) == (band ? 0 : 1));
        CHECK(mc.at({i, j}) == (band && j <= i ? 0 : 1));
        const bool global = i == 0 || i == 5 || j == 0 || j == 5;
        CHECK(mg.at({i, j}) == (band || global ? 0 : 1));
        const bool gc = (i == 4 || j == 4) && j <= i;
        CHECK(mgc.at({i, j}) == ((band && j <= i) || gc ? 0 : 1));
      }
    CHECK_THROWS_AS(sliding_window_mask(4, 1, false, {4}), Error);
  }

  TEST_CASE("causal window mask: the causal band, and a decoding step's rows are its last rows") {
    const int64_t t = 9, w = 3;
    const Tensor full = causal_window_mask(t, t, w);
    CHECK(max_abs_diff(full, sliding_window_mask(t, w, /*causal=*/true)) == 0);
    const Tensor step = causal_window_mask(2, t, w);  // the last two queries of nine
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < t; ++j) CHECK(step.at({i, j}) == full.at({t - 2 + i, j}));
    CHECK(causal_window_mask(1, t, 0).at({0, t - 1}) == 0);  // window 0: only itself
    CHECK(causal_window_mask(1, t, 0).at({0, t - 2}) == 1);
    CHECK_THROWS_AS(causal_window_mask(3, 2, 1), Error);
    CHECK_THROWS_AS(causal_window_mask(2, 2, -1), Error);
  }

  TEST_CASE("decoder-only with attention_window: L blocks reach L * window tokens back, no more") {
    DecoderOnlyOptions o;
    o.vocab_size = 11, o.max_len = 32, o.d_model = 16, o.nhead = 2, o.dim_feedforward = 32;
    o.num_layers = 2, o.dropout = 0, o.positions = PositionKind::kRope;
    const int64_t t = 20, w = 3, p = 4;  // token p is changed; L * w = 6
    Tensor ids({1, t});
    for (int64_t i = 0; i < t; ++i) ids[i] = static_cast<real>(1 + (i * 7) % 10);
    Tensor changed = ids.clone();
    changed[p] = static_cast<real>(1 + (static_cast<int64_t>(ids[p]) % 10));
    Generator g1(5), g2(5);
    DecoderOnlyTransformer full(o, g1);
    o.attention_window = w;
    DecoderOnlyTransformer windowed(o, g2);  // the same weights (same seed, same parameters)
    NoGrad off;
    const Tensor a = windowed.forward(ids).value(), b = windowed.forward(changed).value();
    const int64_t v = a.size(2);
    auto moved = [&](int64_t pos) {
      double m = 0;
      for (int64_t c = 0; c < v; ++c)
        m = std::max(m, double(std::abs(a[pos * v + c] - b[pos * v + c])));
      return m;
    };
    for (int64_t pos = 0; pos < t; ++pos) {
      CAPTURE(pos);
      if (pos < p || pos > p + o.num_layers * w)
        CHECK(moved(pos) == 0);
      else
        CHECK(moved(pos) > 0);
    }
    // A window that covers the whole sequence changes nothing.
    o.attention_window = t;
    Generator g3(5);
    DecoderOnlyTransformer wide(o, g3);
    CHECK(max_abs_diff(wide.forward(ids).value(), full.forward(ids).value()) <= 1e-6);
    // Cached generation (one query over all cached keys) equals recomputation.
    windowed.eval();
    Generator unused(0);
    const Tensor prompt = Tensor::from_vector({1, 3}, {2, 5, 7});
    CHECK(max_abs_diff(windowed.generate(prompt, 12, {}, unused, std::nullopt, true),
                       windowed.generate(prompt, 12, {}, unused, std::nullopt, false)) == 0);
    o.attention_window = -1;
    CHECK_THROWS_AS(DecoderOnlyTransformer(o, g3), Error);
  }

  TEST_CASE("SlidingWindowAttention: outputs depend only on keys inside the window") {
    // Both paths: the reference path's (T,T) weights vanish outside the pattern; on the fast path
    // (banded_attention, no weights returned) the tape's gradients show the same pattern.
    for (const bool reference : {true, false}) {
      CAPTURE(reference);
      ReferenceModeScope mode(reference);
      Generator gen(31);
      SlidingWindowAttention swa(8, 2, /*window=*/1, gen, /*causal=*/false, {0});
      const int64_t t = 7;
      Var x = Var::parameter(Tensor::randn({1, t, 8}, gen));
      AttentionOutput a = swa.forward(x);
      if (reference) {
        const Tensor& wts = a.weights.value();  // (1,2,T,T)
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t i = 0; i < t; ++i)
            for (int64_t j = 0; j < t; ++j)
              if (std::abs(i - j) > 1 && i != 0 && j != 0) CHECK(wts.at({0, h, i, j}) == 0);
      }
      // d out[3] / d x[j]: exactly 0 through the tape for every j outside token 3's window
      // (2..4) that is not the global token 0, i.e. j = 1, 5, 6.
      Tensor gy({1, t, 8});
      for (int64_t c = 0; c < 8; ++c) gy.at({0, 3, c}) = 1;
      a.out.backward(gy);
      for (int64_t j = 0; j < t; ++j) {
        double norm = 0;
        for (int64_t c = 0; c < 8; ++c) norm += std::abs(x.grad().at({0, j, c}));
        CAPTURE(j);
        if (j == 1 || j == 5 || j == 6)
          CHECK(norm == 0);
        else
          CHECK(norm > 0);
      }
    }
  }

  TEST_CASE("llama block: names, causality through the tape, KV cache, blockwise kernel, GQA") {
    Generator gen(41);
    LlamaConfig cfg;
    cfg.dim = 16, cfg.n_heads = 4, cfg.n_kv_heads = 2, cfg.hidden_dim = 24;
    LlamaBlock block(cfg, gen);
    const auto sd = block.state_dict();
    for (const char* n : {"attention.wq.weight", "attention.wk.weight", "attention.wv.weight",
                          "attention.wo.weight", "feed_forward.w1.weight", "feed_forward.w2.weight",
                          "feed_forward.w3.weight", "attention_norm.weight", "ffn_norm.weight"})
      CHECK(sd.count(n) == 1);
    CHECK(sd.size() == 9);
    CHECK(sd.at("attention.wk.weight").shape() == Shape{8, 16});  // 2 kv heads of size 4
    CHECK(llama_hidden_dim(4096, 256) == 11008);                  // llama-7B's width

    const int64_t t = 6;
    const Tensor x0 = Tensor::randn({2, t, 16}, gen);
    // Causality: d y[2] / d x[j] is exactly zero for j > 2.
    Var x = Var::parameter(x0.clone());
    Var y = block.forward(x);
    Tensor gy({2, t, 16});
    for (int64_t c = 0; c < 16; ++c) gy.at({1, 2, c}) = 1;
    y.backward(gy);
    for (int64_t j = 0; j < t; ++j) {
      double norm = 0;
      for (int64_t c = 0; c < 16; ++c) norm += std::abs(x.grad().at({1, j, c}));
      CAPTURE(j);
      CHECK((j > 2 ? norm == 0 : norm > 0));
    }
    // KV cache: a prompt of 4 then two single steps == one full pass.
    const Tensor full = block.forward(Var::constant(x0)).value();
    KVCache cache;
    std::vector<Var> parts = {block.forward(slice(Var::constant(x0), 1, 0, 4), &cache)};
    for (int64_t s = 4; s < t; ++s)
      parts.push_back(block.forward(slice(Var::constant(x0), 1, s, s + 1), &cache));
    CHECK(max_abs_diff(concat(parts, 1).value(), full) <= 1e-5);
    // The blockwise kernel gives the same block.
    LlamaConfig bcfg = cfg;
    bcfg.blockwise = true, bcfg.block_size = 4;
    Generator gen2(41);
    LlamaBlock fast(bcfg, gen2);
    fast.load_state_dict(block.state_dict());
    CHECK(max_abs_diff(fast.forward(Var::constant(x0)).value(), full) <= 1e-5);
  }

  TEST_CASE("llama attention with n_kv_heads = n_heads equals GQA with kv heads duplicated") {
    Generator gen(42);
    LlamaConfig mha;
    mha.dim = 16, mha.n_heads = 4, mha.n_kv_heads = 4, mha.hidden_dim = 8;
    LlamaConfig gqa = mha;
    gqa.n_kv_heads = 2;
    LlamaAttention a(mha, gen), b(gqa, gen);
    // Copy b's weights into a, each kv head's rows duplicated for its two query heads.
    a.wq->weight.value().copy_from(b.wq->weight.value());
    a.wo->weight.value().copy_from(b.wo->weight.value());
    for (auto [dst, src] : {std::pair{a.wk, b.wk}, std::pair{a.wv, b.wv}})
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t r = 0; r < 4; ++r)
          for (int64_t c = 0; c < 16; ++c)
            dst->weight.value().at({h * 4 + r, c}) = src->weight.value().at({(h / 2) * 4 + r, c});
    const Var x = Var::constant(Tensor::randn({2, 5, 16}, gen));
    CHECK(max_abs_diff(a.forward(x).value(), b.forward(x).value()) <= 1e-5);
  }
}

}  // namespace attn::nn
