// The same numbers at any thread count (issue 32): a small transformer-like forward and backward
// (linear layers, layer norm, GELU, plain, fused, triangular and blockwise attention, fused
// attention with dropout of its weights through both backward schedules, gelu_linear with
// dropout, a loss)
// and bare products near the small-GEMM and split thresholds, run at 1 and at 2 threads, must
// give bit-identical values and gradients. Kernel choices and reduction splits depend on the
// shapes and the call site, never on how many threads run.
#include <doctest/doctest.h>

#include <array>
#include <cstring>
#include <functional>
#include <vector>

#include "autograd/functional.h"
#include "autograd/generator.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/parallel.h"
#include "autograd/ops/fused/fused_dropout.h"
#include "autograd/tensor.h"

namespace attn {

namespace {

// Restores the thread count a test found, whatever it ends with.
struct ThreadsRestorer {
  int before = num_threads();
  ~ThreadsRestorer() { set_num_threads(before); }
};

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), sizeof(real) * static_cast<size_t>(a.numel())) == 0;
}

// A block of the kind the experiments train: x (B,T,C) through a linear layer to q, k, v,
// four attention kernels, a GELU feed-forward with layer norm, and a cross-entropy loss. Sizes
// put the products on both sides of small_gemm's serial limit (kSmallMaxSerialMNK) and make
// blockwise attention's backward run on fewer key heads than threads.
std::vector<Tensor> forward_backward() {
  Generator gen(11);
  constexpr int64_t kB = 4, kT = 64, kC = 64, kH = 4, kD = kC / kH, kVocab = 40;
  Var x = Var::parameter(Tensor::randn({kB, kT, kC}, gen));
  Var w_qkv = Var::parameter(Tensor::randn({3 * kC, kC}, gen, 0.1));
  Var w_up = Var::parameter(Tensor::randn({4 * kC, kC}, gen, 0.1));
  Var w_down = Var::parameter(Tensor::randn({kC, 4 * kC}, gen, 0.1));
  Var w_out = Var::parameter(Tensor::randn({kVocab, kC}, gen, 0.1));
  Var ln_w = Var::parameter(Tensor::ones({kC})), ln_b = Var::parameter(Tensor::zeros({kC}));
  Tensor targets({kB, kT});
  for (int64_t i = 0; i < targets.numel(); ++i) targets.data()[i] = real(i * 7 % kVocab);

  const Var qkv = linear(x, w_qkv);
  const Var q = head_slice(qkv, kH, 0, kC), k = head_slice(qkv, kH, kC, 2 * kC),
            v = head_slice(qkv, kH, 2 * kC, 3 * kC);
  const real scale = real(0.25);
  const Var plain = matmul(softmax(matmul(q, k, false, true, scale)), v);
  const Var tri = tril_matmul(attention_weights(q, k, scale, true), v);
  // One (batch, head) pair: fewer key heads than threads, so the backward splits the keys.
  const Var one_q = slice(slice(q, 0, 0, 1), 1, 0, 1), one_k = slice(slice(k, 0, 0, 1), 1, 0, 1),
            one_v = slice(slice(v, 0, 0, 1), 1, 0, 1);
  const Var block = blockwise_attention(one_q, one_k, one_v, true, 16);
  const Var fused = fused_attention(qkv, qkv, qkv,
                                    {.heads = kH,
                                     .kv_heads = kH / 2,
                                     .head_dim = kD,
                                     .v_head_dim = kD,
                                     .q_col = 0,
                                     .k_col = kC,
                                     .v_col = 2 * kC,
                                     .scale = scale,
                                     .causal = true})
                        .out;
  // Dropout inside the kernel (its mask regenerated in backward): one job per head for the
  // batch, and one batch entry with one key head, whose backward takes the two passes.
  Generator drop(13);
  const FusedAttentionSpec per_head{.heads = kH,
                                    .kv_heads = kH,
                                    .head_dim = kD,
                                    .v_head_dim = kD,
                                    .k_col = kC,
                                    .v_col = 2 * kC,
                                    .scale = scale,
                                    .causal = true};
  const FusedDropout dropout{.p = real(0.1), .gen = &drop};
  const Var dropped = fused_attention(qkv, qkv, qkv, per_head, dropout).out;
  FusedAttentionSpec one_key_head = per_head;
  one_key_head.kv_heads = 1, one_key_head.v_col = kC + kD, one_key_head.causal = false;
  const Var first = slice(qkv, 0, 0, 1);
  const Var dropped_one = fused_attention(first, first, first, one_key_head, dropout).out;
  const Var heads = add(add(plain, tri), head_slice(add(fused, dropped), kH, 0, kC));
  const Var h = add(x, reshape(transpose(reshape(heads, {kB, kH, kT * kD})), {kB, kT, kC}));
  // The feed-forward twice: GELU and product apart, and gelu_linear with dropout of GELU(x).
  const Var up = linear(layer_norm(h, ln_w, ln_b), w_up);
  const Var y = add(add(h, linear(gelu(up), w_down)),
                    gelu_linear(up, w_down, std::nullopt, GeluApprox::kNone, dropout));
  const Var loss = add(add(cross_entropy(linear(y, w_out), targets), sum(mul(block, block))),
                       sum(mul(dropped_one, dropped_one)));
  loss.backward();
  return {loss.value(), y.value(),     block.value(), dropped_one.value(), x.grad(),   w_qkv.grad(),
          w_up.grad(),  w_down.grad(), w_out.grad(),  ln_w.grad(),         ln_b.grad()};
}

// One product through gemm_split, one through gemm inside a parallel_for body, and one through
// gemm outside any (which OpenBLAS may split across the threads itself).
std::vector<Tensor> products(int64_t m, int64_t n, int64_t k) {
  Generator gen(5);
  const Tensor a = Tensor::randn({m, k}, gen), b = Tensor::randn({n, k}, gen);
  Tensor split({m, n}), in_body({m, n}), whole({m, n});
  // C = A B^T; each call below differs from this one only in C (and the body's in its rows).
  const kernels::GemmCall product{.trans_b = true,
                                  .m = m,
                                  .n = n,
                                  .k = k,
                                  .a = a.data(),
                                  .lda = k,
                                  .b = b.data(),
                                  .ldb = k,
                                  .c = whole.data(),
                                  .ldc = n};
  kernels::gemm(product);
  kernels::GemmCall to_split = product;
  to_split.c = split.data();
  kernels::gemm_split(to_split);
  kernels::parallel_for(2, kernels::kParallelThreshold, [&](int64_t half) {
    const int64_t lo = half * (m / 2), rows = half == 0 ? m / 2 : m - m / 2;
    kernels::GemmCall part = product;
    part.m = rows;
    part.a = a.data() + lo * k;
    part.c = in_body.data() + lo * n;
    kernels::gemm(part);
  });
  return {split, in_body, whole};
}

void check_same_at_1_and_2_threads(const std::function<std::vector<Tensor>()>& run) {
  ThreadsRestorer restore;
  set_num_threads(1);
  const std::vector<Tensor> one = run();
  set_num_threads(2);
  const std::vector<Tensor> two = run();
  REQUIRE(one.size() == two.size());
  for (size_t i = 0; i < one.size(); ++i) {
    CAPTURE(i);
    CHECK(same_bits(one[i], two[i]));
  }
}

}  // namespace

TEST_SUITE("threads") {
  TEST_CASE("a transformer block's values and gradients are bit-identical at 1 and 2 threads") {
    check_same_at_1_and_2_threads(forward_backward);
  }

  TEST_CASE("products near the small-GEMM and split limits are bit-identical at 1 and 2 threads") {
    // Around kSmallMaxSerialMNK (4 * 65536 multiply-adds) with a panel small_gemm takes, wider
    // than its panel, large enough for gemm_split to split by rows or by columns, and one too
    // narrow to split with a long K (3.1e6 multiply-adds: OpenBLAS would split it itself).
    for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{{64, 64, 64},
                                                                     {128, 64, 64},
                                                                     {256, 128, 64},
                                                                     {512, 96, 48},
                                                                     {96, 512, 48},
                                                                     {300, 200, 100},
                                                                     {1024, 64, 32},
                                                                     {24, 32, 4096}}) {
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      check_same_at_1_and_2_threads([&, m = m, n = n, k = k] { return products(m, n, k); });
    }
  }
}

}  // namespace attn
