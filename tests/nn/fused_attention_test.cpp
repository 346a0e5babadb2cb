// fused_attention against the unfused path it replaces in MultiheadAttention (head_slice, sdpa,
// merge_heads): outputs, weights and gradients, through both of its backward schedules, without
// and with dropout of the weights (the same generator state on both sides: the same mask).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "autograd/mode.h"
#include "autograd/ops/fused/fused_dropout.h"
#include "nn/attention/sdpa.h"

namespace attn::nn {

namespace {

struct Config {
  int64_t b, h, hkv, tq, tk, d;
  bool causal;
};

struct Result {
  Tensor out, weights, dx, dm;
  uint64_t next_draw = 0;  // the dropout generator's next word after the call
};

// Which attention computes the result: the fused kernel, sdpa's fast path (attention_weights,
// dropout, tril_matmul) or the reference path (matmul, mul_scalar, masked_fill, softmax, dropout,
// matmul: the elementary ops).
enum class Path { kFused, kSdpa, kReference };

// Queries from x (B,Tq,1 + H D) at column 1; keys and values side by side in m (B,Tk,2 Hkv D).
// The loss reads the output and, with weights_loss, the weights, each weighted by fixed random
// values. Without the weights in the loss the backward takes its other softmax route (the dots
// <dO_i, O_i>, and dS written by the score gradient's store where small_gemm takes it). With
// p > 0 the weights are dropped in training, the mask drawn from a generator seeded 11.
Result run(const Config& c, Path path, bool weights_loss, real p = 0) {
  Generator gen(7), drop(11);
  const int64_t kv = c.hkv * c.d;
  Var x = Var::parameter(Tensor::randn({c.b, c.tq, 1 + c.h * c.d}, gen));
  Var m = Var::parameter(Tensor::randn({c.b, c.tk, 2 * kv}, gen));
  const Var r_out = Var::constant(Tensor::randn({c.b, c.tq, c.h * c.d}, gen));
  const Var r_w = Var::constant(Tensor::randn({c.b, c.h, c.tq, c.tk}, gen));
  const real scale = real(1 / std::sqrt(double(c.d)));
  Var out, weights;
  if (path == Path::kFused) {
    FusedAttentionOutput a = fused_attention(x, m, m,
                                             {.heads = c.h,
                                              .kv_heads = c.hkv,
                                              .head_dim = c.d,
                                              .v_head_dim = c.d,
                                              .q_col = 1,
                                              .k_col = 0,
                                              .v_col = kv,
                                              .scale = scale,
                                              .causal = c.causal},
                                             {.p = p, .gen = &drop});
    out = a.out, weights = a.weights;
  } else {
    ReferenceModeScope mode(path == Path::kReference);
    SdpaOptions opt{.dropout_p = p, .dropout_gen = &drop, .training = p > 0};
    opt.masks.causal = c.causal;
    AttentionOutput a = scaled_dot_product_attention(head_slice(x, c.h, 1, 1 + c.h * c.d),
                                                     head_slice(m, c.hkv, 0, kv),
                                                     head_slice(m, c.hkv, kv, 2 * kv), opt);
    out = merge_heads(a.out), weights = a.weights;
  }
  if (weights_loss)
    add(sum(mul(out, r_out)), sum(mul(weights, r_w))).backward();
  else
    sum(mul(out, r_out)).backward();
  return {out.value(), weights.value(), x.grad(), m.grad(), drop.next_u64()};
}

void check_same(const Tensor& a, const Tensor& b, const char* what) {
  REQUIRE(a.shape() == b.shape());
  double worst = 0, scale = 1;
  for (int64_t i = 0; i < a.numel(); ++i) {
    worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::abs(double(b[i])));
  }
  INFO(what);
  CHECK(worst / scale < 2e-6);
}

void check_same(const Result& f, const Result& r) {
  check_same(f.out, r.out, "out");
  check_same(f.weights, r.weights, "weights");
  check_same(f.dx, r.dx, "dx");
  check_same(f.dm, r.dm, "dm");
  CHECK(f.next_draw == r.next_draw);  // as many draws from the dropout generator
}

void check_config(const Config& c) {
  for (const bool weights_loss : {true, false}) {
    CAPTURE(weights_loss);
    const Result f = run(c, Path::kFused, weights_loss);
    check_same(f, run(c, Path::kSdpa, weights_loss));
    // x's column 0 is read by no head: its gradient is exactly 0.
    for (int64_t row = 0; row < c.b * c.tq; ++row) CHECK(f.dx[row * f.dx.size(2)] == 0);
    // Dropout of the weights: the reference draws its mask over the whole (B,H,Tq,Tk) weights,
    // the kernel row by row over the keys each row sees; the masks must be the same. The output
    // with dropout differs from the one without (the test sees the mask act), and both
    // unfused paths agree with the kernel.
    const real p = real(0.3);
    const Result fd = run(c, Path::kFused, weights_loss, p);
    CHECK(max_abs_diff(fd.out, f.out) > 1e-3);
    check_same(fd, run(c, Path::kSdpa, weights_loss, p));
    check_same(fd, run(c, Path::kReference, weights_loss, p));
  }
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("fused_attention equals head_slice + sdpa + merge_heads, output and weights") {
    const int before = num_threads();
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      CAPTURE(threads);
      // One job per key head (B Hkv >= 2 threads), causal and not, grouped heads.
      check_config({.b = 4, .h = 4, .hkv = 4, .tq = 16, .tk = 16, .d = 8, .causal = true});
      check_config({.b = 3, .h = 4, .hkv = 2, .tq = 7, .tk = 9, .d = 8, .causal = false});
      // The two-pass backward (one key head), a KV cache's diagonal, rows past 4-row blocks.
      check_config({.b = 1, .h = 2, .hkv = 1, .tq = 9, .tk = 13, .d = 4, .causal = true});
      check_config({.b = 1, .h = 1, .hkv = 1, .tq = 37, .tk = 37, .d = 16, .causal = true});
      // Score products too wide for small_gemm's panel: BLAS, then the row pass.
      check_config({.b = 2, .h = 1, .hkv = 1, .tq = 300, .tk = 300, .d = 32, .causal = true});
    }
    set_num_threads(before);
  }

  TEST_CASE("fused_attention without the tape returns plain tensors") {
    Generator gen(3);
    Var x = Var::parameter(Tensor::randn({2, 5, 12}, gen));
    NoGrad off;
    FusedAttentionOutput a = fused_attention(x, x, x,
                                             {.heads = 2,
                                              .kv_heads = 2,
                                              .head_dim = 2,
                                              .v_head_dim = 2,
                                              .k_col = 4,
                                              .v_col = 8,
                                              .scale = 1,
                                              .causal = true});
    CHECK_FALSE(a.out.requires_grad());
    CHECK_FALSE(a.weights.requires_grad());
    CHECK(a.weights.shape() == Shape{2, 2, 5, 5});
    CHECK(a.weights.value()[1] == 0);  // row 0 sees only key 0
  }

  TEST_CASE("fused_attention errors name the op, the shapes and the columns") {
    Var x = Var::constant(Tensor::zeros({2, 5, 12}));
    Var short_kv = Var::constant(Tensor::zeros({2, 4, 12}));
    const FusedAttentionSpec spec{.heads = 2,
                                  .kv_heads = 2,
                                  .head_dim = 2,
                                  .v_head_dim = 2,
                                  .k_col = 4,
                                  .v_col = 10,
                                  .scale = 1};
    CHECK_THROWS_WITH_AS(fused_attention(x, x, x, spec),
                         doctest::Contains("at columns q 0 k 4 v 10"), Error);
    FusedAttentionSpec causal = spec;
    causal.v_col = 8, causal.causal = true;
    CHECK_THROWS_WITH_AS(fused_attention(x, short_kv, short_kv, causal),
                         doctest::Contains("Tq <= Tk (causal)"), Error);
    FusedAttentionSpec grouped = causal;
    grouped.kv_heads = 3;
    CHECK_THROWS_WITH_AS(fused_attention(x, x, x, grouped), doctest::Contains("heads=2 kv_heads=3"),
                         Error);
  }
}

}  // namespace attn::nn
