// The tape's contract: accumulation, NoGrad, detach, clearing, error messages.
#include <doctest/doctest.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/generator.h"
#include "autograd/ops/recurrent_cells.h"

namespace attn {

TEST_SUITE("autograd") {
  TEST_CASE("a value used twice receives both gradient contributions") {
    Var x = Var::parameter(Tensor::from_vector({2}, {3, -1}));
    Var y = sum(mul(x, x));  // d/dx sum(x^2) = 2x, arriving through both operands of mul
    y.backward();
    CHECK(x.grad()[0] == doctest::Approx(6));
    CHECK(x.grad()[1] == doctest::Approx(-2));
  }

  TEST_CASE("gradients passed straight through are shared, and copied before any write") {
    // add hands the same dy to p and q. q then receives r's contribution while p has not yet
    // run its backward: adding into the shared buffer in place would corrupt p's gradient.
    Var a = Var::parameter(Tensor::from_vector({2}, {1, -2}));
    Var p = mul_scalar(a, 2);
    Var q = mul_scalar(a, 3);
    Var r = mul_scalar(q, 5);
    Var loss = add(sum(add(p, q)), sum(r));
    loss.backward({.retain_graph = true});
    CHECK(a.grad()[0] == doctest::Approx(2 + 3 + 15));
    CHECK(a.grad()[1] == doctest::Approx(2 + 3 + 15));
    CHECK(p.grad()[0] == doctest::Approx(1));
    CHECK(q.grad()[0] == doctest::Approx(6));
    // A leaf never shares: a parameter's gradient is written in place by optimizers.
    Var b = Var::parameter(Tensor::ones({2}));
    Var s = add(b, b);
    sum(s).backward();
    CHECK(b.grad()[0] == doctest::Approx(2));
    CHECK_FALSE(b.grad().shares_storage(s.grad()));
    tape().clear();
  }

  TEST_CASE("ops that add into an input's gradient in place copy a shared buffer first") {
    // add(gx, c) runs backward first and hands the same dy to gx and c. The LSTM step then adds
    // its gate gradients into gx's gradient in place (Node::own_grad); writing into the shared
    // buffer would also change c's gradient, which c's own backward reads afterwards.
    Generator gen(11);
    Var b = Var::parameter(Tensor::randn({2, 1, 4}, gen));
    Var gx = mul_scalar(Var::parameter(Tensor::randn({2, 1, 4}, gen)), 1);
    Var state = Var::parameter(Tensor::randn({2, 1, 1}, gen));
    Var w_hh = Var::parameter(Tensor::randn({4, 1}, gen));
    Var bias = Var::parameter(Tensor::zeros({4}));
    Var c = mul_scalar(b, 1);  // recorded before the step: its backward runs after it
    Var step = lstm_cell(gx, 0, state, w_hh, bias, bias);
    Var loss = add(sum(step), sum(add(gx, c)));
    loss.backward();
    for (int64_t i = 0; i < 8; ++i) CHECK(b.grad()[i] == doctest::Approx(1));
  }

  TEST_CASE("linear and layer_norm add into a gradient that already exists, in place") {
    // x has a gradient (from the term recorded last, whose backward runs first) when linear's
    // and layer_norm's backwards run (Op::existing_grad): the GEMM adds with beta = 1 and
    // layer_norm adds dx in its pass. W is used twice, so its second product adds in place too.
    // The result must equal the sum of each term's gradient taken on its own, where every
    // contribution is the first to arrive.
    Generator gen(3);
    const Tensor x0 = Tensor::randn({5, 4}, gen), w0 = Tensor::randn({3, 4}, gen);
    const Tensor c0 = Tensor::randn({5, 3}, gen), d0 = Tensor::randn({5, 4}, gen);
    auto grads = [&](std::vector<int> terms) {
      Var x = Var::parameter(x0), w = Var::parameter(w0);
      Var g = Var::parameter(Tensor::ones({4})), b = Var::parameter(Tensor::zeros({4}));
      Var c = Var::constant(c0), d = Var::constant(d0);
      Var loss = Var::constant(Tensor::zeros({}));
      for (int t : terms) {
        Var term = t == 0   ? mul(linear(x, w), c)
                   : t == 1 ? mul(linear(mul_scalar(x, 2), w), c)
                   : t == 2 ? mul(layer_norm(x, g, b, 1e-5f), d)
                            : mul_scalar(x, 3);
        loss = add(loss, sum(term));
      }
      loss.backward();
      return std::pair{x.grad().clone(), w.has_grad() ? w.grad().clone() : Tensor::zeros({3, 4})};
    };
    const auto [x_all, w_all] = grads({0, 1, 2, 3});
    Tensor x_sum = Tensor::zeros({5, 4}), w_sum = Tensor::zeros({3, 4});
    for (int t = 0; t < 4; ++t) {
      const auto [x_one, w_one] = grads({t});
      x_sum += x_one;
      w_sum += w_one;
    }
    for (int64_t i = 0; i < x0.numel(); ++i) CHECK(x_all[i] == doctest::Approx(x_sum[i]));
    for (int64_t i = 0; i < w0.numel(); ++i) CHECK(w_all[i] == doctest::Approx(w_sum[i]));
  }

  TEST_CASE("backward drops gradients only the tape can reach, keeps the ones the caller holds") {
    Var x = Var::parameter(Tensor::from_vector({2}, {1, 2}));
    Var held = mul_scalar(x, 2);  // the caller keeps this one and may read its gradient
    Var loss = sum(mul_scalar(mul_scalar(held, 3), 5));
    loss.backward();
    CHECK(held.has_grad());
    CHECK(held.grad()[1] == doctest::Approx(15));
    CHECK(x.grad()[1] == doctest::Approx(30));
    // With retain_graph nothing is dropped: the tape and every gradient stay to be inspected.
    Var y = Var::parameter(Tensor::ones({2}));
    sum(mul_scalar(y, 4)).backward({.retain_graph = true});
    CHECK(tape().record(0).output.has_grad());
    tape().clear();
  }

  TEST_CASE("head slices of one packed tensor add their gradients into its columns") {
    // q, k, v read columns of one (B,T,3E) projection; the second and third head_slice to run
    // backward add into the gradient the first one made. The result must equal the same split
    // done by slice + reshape + permute. The add recorded last runs backward first and hands
    // one dy buffer to both qkv and c: the in-place adds must copy it, or c's gradient changes.
    Generator gen(5);
    const Tensor x0 = Tensor::randn({2, 3, 12}, gen), w = Tensor::randn({2, 2, 3, 2}, gen);
    auto grads = [&](bool fused) {
      Var x = Var::parameter(x0), b = Var::parameter(Tensor::ones({2, 3, 12}));
      Var c = mul_scalar(b, 1);  // recorded before the head slices: its backward runs after
      Var qkv = mul_scalar(x, 2);
      Var total = sum(mul(qkv, qkv));
      for (int64_t part = 0; part < 3; ++part) {
        Var heads = fused ? head_slice(qkv, 2, 4 * part, 4 * part + 4)
                          : permute(reshape(slice(qkv, 2, 4 * part, 4 * part + 4), {2, 3, 2, 2}),
                                    {0, 2, 1, 3});
        total = add(total, sum(mul(heads, Var::constant(w))));
      }
      add(total, sum(add(qkv, c))).backward();
      return std::pair{x.grad(), b.grad()};
    };
    const auto [x_fused, b_fused] = grads(true);
    const auto [x_plain, b_plain] = grads(false);
    CHECK(max_abs_diff(x_fused, x_plain) < 1e-6);
    CHECK(max_abs_diff(b_fused, Tensor::ones({2, 3, 12})) == 0);
  }

  TEST_CASE("NoGrad records nothing and detach cuts the graph") {
    Var x = Var::parameter(Tensor::ones({2, 2}));
    {
      NoGrad off;
      Var y = add(x, x);
      CHECK_FALSE(y.requires_grad());
      CHECK(tape().size() == 0);
    }
    Var d = x.detach();
    CHECK_FALSE(d.requires_grad());
    CHECK(d.value().shares_storage(x.value()));
    Var y = add(x, d);
    CHECK(tape().size() == 1);
    tape().clear();
    CHECK(tape().size() == 0);
    (void)y;
  }

  TEST_CASE("backward clears the tape unless asked to retain it") {
    Var x = Var::parameter(Tensor::ones({3}));
    sum(x).backward({.retain_graph = true});
    CHECK(tape().size() == 1);
    CHECK(tape().to_string().find("sum") != std::string::npos);
    tape().clear();
    x.zero_grad();
    sum(x).backward();
    CHECK(tape().size() == 0);
  }

  TEST_CASE("a second backward over a retained tape propagates only its own gradient") {
    // PyTorch: leaves accumulate over backward calls; what flows through the graph in a pass
    // is that pass's gradient alone. x -> h = 2x -> y = sum(h^2) = 4 sum(x^2); dy/dx = 8x.
    Var x = Var::parameter(Tensor::from_vector({2}, {1, -3}));
    Var h = mul_scalar(x, 2);
    Var y = sum(mul(h, h));
    y.backward({.retain_graph = true});
    CHECK(x.grad()[0] == doctest::Approx(8));
    CHECK(h.grad()[0] == doctest::Approx(4));  // kept for inspection: dy/dh = 2h
    y.backward({.retain_graph = true});
    CHECK(x.grad()[0] == doctest::Approx(16));  // 8 + 8, not 8 + 16
    CHECK(x.grad()[1] == doctest::Approx(-48));
    CHECK(h.grad()[0] == doctest::Approx(4));  // this pass's dy/dh
    // Two losses over one graph: the second pass adds its own gradient only.
    Var z = sum(h);  // dz/dx = 2
    z.backward();
    CHECK(x.grad()[0] == doctest::Approx(18));
    CHECK(x.grad()[1] == doctest::Approx(-46));
    CHECK(tape().size() == 0);
  }

  TEST_CASE("backward from a non-scalar without a gradient is an error that says what to do") {
    Var x = Var::parameter(Tensor::ones({2, 3}));
    Var y = add(x, x);
    CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("non-scalar of shape (2,3)"), Error);
    CHECK_THROWS_WITH_AS(y.backward(Tensor::ones({3})), doctest::Contains("upstream gradient"),
                         Error);
    tape().clear();
  }

  TEST_CASE("shape errors name the op and both shapes") {
    Var a = Var::constant(Tensor::ones({2, 3}));
    Var b = Var::constant(Tensor::ones({4, 5}));
    CHECK_THROWS_WITH_AS(matmul(a, b), doctest::Contains("matmul: inner dimensions differ"), Error);
    CHECK_THROWS_WITH_AS(matmul(a, b), doctest::Contains("(2,3)"), Error);
    CHECK_THROWS_WITH_AS(add(a, b), doctest::Contains("add: shapes (2,3) and (4,5)"), Error);
    // The fused ops name themselves and every shape involved.
    Var w = Var::constant(Tensor::ones({5, 4}));
    CHECK_THROWS_WITH_AS(linear(a, w), doctest::Contains("linear: expected x (..., in)"), Error);
    CHECK_THROWS_WITH_AS(linear(a, w), doctest::Contains("weight (5,4)"), Error);
    CHECK_THROWS_WITH_AS(masked_softmax(a, Tensor::ones({2, 4})),
                         doctest::Contains("masked_softmax: mask (2,4) must match x (2,3)"), Error);
    CHECK_THROWS_WITH_AS(masked_softmax(a, Tensor::ones({4, 3})),
                         doctest::Contains("does not broadcast to x (2,3)"), Error);
    // The causal attention ops: more queries than keys, mismatched axes.
    Var q = Var::constant(Tensor::ones({2, 5, 4})), k = Var::constant(Tensor::ones({2, 3, 4}));
    CHECK_THROWS_WITH_AS(attention_weights(q, k, 1, true),
                         doctest::Contains("attention_weights: expected q (...,H,Tq,D)"), Error);
    CHECK_THROWS_WITH_AS(attention_weights(q, k, 1, true),
                         doctest::Contains("Tq <= Tk (causal); got q (2,5,4) k (2,3,4)"), Error);
    CHECK_THROWS_WITH_AS(tril_matmul(q, k),
                         doctest::Contains("tril_matmul: expected a (...,H,M,K)"), Error);
    CHECK_THROWS_WITH_AS(tril_matmul(q, k), doctest::Contains("got a (2,5,4) b (2,3,4)"), Error);
    // Grouped heads: 3 query heads cannot share 2 key heads.
    Var q3 = Var::constant(Tensor::ones({1, 3, 2, 4})),
        k2 = Var::constant(Tensor::ones({1, 2, 2, 4}));
    CHECK_THROWS_WITH_AS(attention_weights(q3, k2, 1, false),
                         doctest::Contains("H a multiple of Hkv"), Error);
    CHECK_THROWS_WITH_AS(head_slice(q, 3, 0, 4),
                         doctest::Contains("head_slice: expected x (B,T,C)"), Error);
    CHECK_THROWS_WITH_AS(head_slice(q, 2, 2, 6), doctest::Contains("columns [2, 6), heads 2"),
                         Error);
  }
  TEST_CASE("the tape counts the FLOPs of the products it recorded, as PyTorch's counter does") {
    Generator gen(3);
    tape().clear();
    // (2,3,4) x (4,5): two (3,4) x (4,5) products, 2 * 2 * 3 * 5 * 4 = 240.
    Var a = Var::parameter(Tensor::randn({2, 3, 4}, gen));
    Var prod = matmul(a, Var::parameter(Tensor::randn({4, 5}, gen)));
    CHECK(tape().forward_flops() == 240);
    // linear: 6 rows of 4 inputs to 5 outputs, 2 * 6 * 4 * 5 = 240; the bias is no product.
    linear(reshape(a, {6, 4}), Var::parameter(Tensor::randn({5, 4}, gen)),
           Var::parameter(Tensor::zeros({5})));
    CHECK(tape().forward_flops() == 480);
    // Element-wise ops count nothing.
    tanh(add(prod, prod));
    CHECK(tape().forward_flops() == 480);
    // An LSTM step, batch 1, H = 1: h (1,1) W_hh^T (1,4) is 2 * 1 * 1 * 4 = 8.
    Var gx = Var::parameter(Tensor::randn({2, 1, 4}, gen));
    lstm_cell(gx, 0, Var::parameter(Tensor::zeros({2, 1, 1})),
              Var::parameter(Tensor::randn({4, 1}, gen)), Var::parameter(Tensor::zeros({4})),
              Var::parameter(Tensor::zeros({4})));
    CHECK(tape().forward_flops() == 488);
    tape().clear();
    CHECK(tape().forward_flops() == 0);
  }
}

}  // namespace attn
