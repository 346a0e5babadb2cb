// Recurrent layers: PyTorch's parameter layout, the fused steps against their composition of
// primitives, padded batches against unpadded single rows, the tape's shape (one input GEMM per
// layer and direction, one step op per time step), carried state, truncated BPTT.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/ops/recurrent_cells.h"
#include "nn/rnn/recurrent.h"
#include "nn/rnn/tbptt.h"

namespace attn {

namespace {

using nn::RecurrentMode;

// The step of `mode` written with primitive ops only (slice, matmul, add, sigmoid, tanh, ...).
Var composed_step(RecurrentMode mode,
                  const Var& gx,
                  int64_t t,
                  const Var& state,
                  const Var& w,
                  const Var& bi,
                  const Var& b,
                  const std::vector<int64_t>& lengths) {
  const bool lstm = mode == RecurrentMode::kLstm;
  const int64_t n = gx.size(1), h = w.size(1), width = w.size(0);
  const Var x = add(reshape(slice(gx, 0, t, t + 1), {n, width}), bi);
  const Var hp = lstm ? reshape(slice(state, 0, 0, 1), {n, h}) : state;
  const Var ah = add(matmul(hp, w, false, true), b);
  auto part = [&](const Var& v, int64_t k) { return slice(v, 1, k * h, (k + 1) * h); };
  Var next;
  if (lstm) {
    const Var a = add(x, ah);
    const Var c = reshape(slice(state, 0, 1, 2), {n, h});
    const Var c2 = sigmoid(part(a, 1)) * c + sigmoid(part(a, 0)) * tanh(part(a, 2));
    next = stack({sigmoid(part(a, 3)) * tanh(c2), c2}, 0);
  } else if (mode == RecurrentMode::kGru) {
    const Var r = sigmoid(part(x, 0) + part(ah, 0));
    const Var z = sigmoid(part(x, 1) + part(ah, 1));
    const Var nn = tanh(part(x, 2) + r * part(ah, 2));
    next = nn + z * (hp - nn);  // (1 - z) n + z h
  } else {
    next = mode == RecurrentMode::kRnnTanh ? tanh(x + ah) : relu(x + ah);
  }
  if (lengths.empty()) return next;
  Tensor keep(lstm ? Shape{1, n, 1} : Shape{n, 1});
  for (int64_t r = 0; r < n; ++r) keep[r] = t < lengths[r] ? 1 : 0;
  return where(keep, next, state);
}

Var fused_step(RecurrentMode mode,
               const Var& gx,
               int64_t t,
               const Var& state,
               const Var& w,
               const Var& bi,
               const Var& b,
               const std::vector<int64_t>& lengths) {
  switch (mode) {
    case RecurrentMode::kLstm:
      return lstm_cell(gx, t, state, w, bi, b, lengths);
    case RecurrentMode::kGru:
      return gru_cell(gx, t, state, w, bi, b, lengths);
    case RecurrentMode::kRnnRelu:
      return rnn_cell(gx, t, state, w, bi, b, RnnNonlinearity::kRelu, lengths);
    case RecurrentMode::kRnnTanh:
      break;
  }
  return rnn_cell(gx, t, state, w, bi, b, RnnNonlinearity::kTanh, lengths);
}

// Values of `a` in rows [0, len) of time axis 1 of a (B,T,C) tensor at batch row b.
Tensor time_rows(const Tensor& a, int64_t b, int64_t len) {
  const int64_t t = a.size(1), c = a.size(2);
  Tensor out({1, len, c});
  std::copy(a.data() + b * t * c, a.data() + (b * t + len) * c, out.data());
  return out;
}

constexpr RecurrentMode kModes[] = {RecurrentMode::kRnnTanh, RecurrentMode::kRnnRelu,
                                    RecurrentMode::kGru, RecurrentMode::kLstm};

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("rnn: parameters follow PyTorch's names, shapes, order and initialisation") {
    Generator gen(0);
    nn::LSTM lstm({.input_size = 3, .hidden_size = 4, .num_layers = 2, .bidirectional = true}, gen);
    const std::vector<std::pair<std::string, Shape>> want = {{"weight_ih_l0", {16, 3}},
                                                             {"weight_hh_l0", {16, 4}},
                                                             {"bias_ih_l0", {16}},
                                                             {"bias_hh_l0", {16}},
                                                             {"weight_ih_l0_reverse", {16, 3}},
                                                             {"weight_hh_l0_reverse", {16, 4}},
                                                             {"bias_ih_l0_reverse", {16}},
                                                             {"bias_hh_l0_reverse", {16}},
                                                             {"weight_ih_l1", {16, 8}},
                                                             {"weight_hh_l1", {16, 4}},
                                                             {"bias_ih_l1", {16}},
                                                             {"bias_hh_l1", {16}},
                                                             {"weight_ih_l1_reverse", {16, 8}},
                                                             {"weight_hh_l1_reverse", {16, 4}},
                                                             {"bias_ih_l1_reverse", {16}},
                                                             {"bias_hh_l1_reverse", {16}}};
    const auto params = lstm.named_parameters();
    REQUIRE(params.size() == want.size());
    double largest = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      CHECK(params[i].first == want[i].first);
      CHECK(params[i].second.shape() == want[i].second);
      for (real v : params[i].second.value().to_vector())
        largest = std::max(largest, double(std::abs(v)));
    }
    CHECK(largest <= 0.5);  // U(-1/sqrt(H), 1/sqrt(H)) with H = 4
    CHECK(largest > 0.45);  // ... and really spread over that range
    nn::GRU gru({.input_size = 3, .hidden_size = 4, .bias = false}, gen);
    CHECK(gru.named_parameters().size() == 2);
    CHECK(gru.named_parameters()[0].second.shape() == Shape{12, 3});
    nn::RNN rnn({.input_size = 3, .hidden_size = 4}, gen, RnnNonlinearity::kRelu);
    CHECK(rnn.mode() == RecurrentMode::kRnnRelu);
    CHECK(rnn.named_parameters()[1].second.shape() == Shape{4, 4});
  }

  TEST_CASE("rnn: each fused step equals its composition of primitive ops, values and gradients") {
    for (RecurrentMode mode : kModes) {
      for (bool padded : {false, true}) {
        CAPTURE(std::string(nn::recurrent_mode_name(mode)));
        CAPTURE(padded);
        Generator gen(11);
        const int64_t n = 3, h = 4;
        const int64_t g = mode == RecurrentMode::kLstm ? 4 : mode == RecurrentMode::kGru ? 3 : 1;
        const Shape state_shape = g == 4 ? Shape{2, n, h} : Shape{n, h};
        const std::vector<Var> leaves = {Var(Tensor::randn({3, n, g * h}, gen), true),
                                         Var(Tensor::randn(state_shape, gen), true),
                                         Var(Tensor::randn({g * h, h}, gen, 0.5), true),
                                         Var(Tensor::randn({g * h}, gen), true),
                                         Var(Tensor::randn({g * h}, gen), true)};
        const std::vector<int64_t> lengths =
            padded ? std::vector<int64_t>{3, 1, 2} : std::vector<int64_t>{};
        const Tensor gy = Tensor::randn(state_shape, gen);
        std::vector<Tensor> values, grads[2];
        int which = 0;
        for (auto step : {fused_step, composed_step}) {
          for (const Var& v : leaves) const_cast<Var&>(v).zero_grad();
          Var y = step(mode, leaves[0], 1, leaves[1], leaves[2], leaves[3], leaves[4], lengths);
          values.push_back(y.value().clone());
          y.backward(gy);
          for (const Var& v : leaves) grads[which].push_back(v.grad().clone());
          ++which;
        }
        CHECK(max_abs_diff(values[0], values[1]) < 1e-5);
        for (size_t i = 0; i < leaves.size(); ++i) {
          CAPTURE(i);
          CHECK(max_abs_diff(grads[0][i], grads[1][i]) < 1e-5);
        }
      }
    }
  }

  TEST_CASE("rnn: a padded batch gives each row what it gets alone, zeros past its end") {
    for (RecurrentMode mode : kModes) {
      CAPTURE(std::string(nn::recurrent_mode_name(mode)));
      Generator gen(5);
      nn::Recurrent m(mode,
                      {.input_size = 3,
                       .hidden_size = 4,
                       .num_layers = 2,
                       .batch_first = true,
                       .bidirectional = true},
                      gen);
      const std::vector<int64_t> lengths = {5, 2, 4};
      const Tensor x = Tensor::randn({3, 5, 3}, gen);
      Var xv(x, true);
      nn::RecurrentOutput all = m.forward(xv, std::nullopt, lengths);
      for (int64_t b = 0; b < 3; ++b) {
        CAPTURE(b);
        const int64_t len = lengths[b];
        NoGrad off;
        nn::RecurrentOutput one = m.forward(Var(time_rows(x, b, len)));
        CHECK(max_abs_diff(time_rows(all.y.value(), b, len), one.y.value()) < 1e-5);
        const Tensor& y = all.y.value();
        for (int64_t t = len; t < 5; ++t)
          for (int64_t c = 0; c < 8; ++c) CHECK(y[(b * 5 + t) * 8 + c] == 0);
        for (const auto& [mine, ref] : {std::pair{all.state.h, one.state.h}}) {
          for (int64_t k = 0; k < 4; ++k)
            for (int64_t j = 0; j < 4; ++j)
              CHECK(std::abs(mine.value()[(k * 3 + b) * 4 + j] - ref.value()[k * 4 + j]) < 1e-5);
        }
      }
      // Past a row's end the input has no influence, so its gradient is exactly 0 there.
      Var loss = sum(all.y) + sum(all.state.h);
      if (all.state.c) loss = loss + sum(*all.state.c);
      loss.backward();
      for (int64_t b = 0; b < 3; ++b)
        for (int64_t t = 0; t < 5; ++t)
          for (int64_t c = 0; c < 3; ++c) {
            const real g = xv.grad()[(b * 5 + t) * 3 + c];
            if (t >= lengths[b]) CHECK(g == 0);
          }
    }
  }

  TEST_CASE("rnn: batch_first only transposes; the final LSTM cell state is c_n") {
    Generator gen(8);
    nn::RecurrentOptions o{.input_size = 2, .hidden_size = 3, .num_layers = 2};
    nn::LSTM tm(o, gen);
    o.batch_first = true;
    nn::LSTM bf(o, gen);
    bf.load_state_dict(tm.state_dict());
    NoGrad off;
    const Var x = Var(Tensor::randn({4, 2, 2}, gen));  // (T,B,C)
    nn::RecurrentOutput a = tm.forward(x);
    nn::RecurrentOutput b = bf.forward(permute(x, {1, 0, 2}));
    CHECK(max_abs_diff(permute(a.y, {1, 0, 2}).value(), b.y.value()) < 1e-6);
    CHECK(max_abs_diff(a.state.h.value(), b.state.h.value()) < 1e-6);
    REQUIRE(a.state.c);
    CHECK(a.state.c->shape() == Shape{2, 2, 3});
    // The top layer's h_n is its last output.
    CHECK(max_abs_diff(reshape(slice(a.state.h, 0, 1, 2), {2, 3}).value(),
                       reshape(slice(a.y, 0, 3, 4), {2, 3}).value()) < 1e-7);
  }

  TEST_CASE("rnn: dropout acts between layers in training only") {
    Generator gen(9);
    nn::RecurrentOptions o{.input_size = 3, .hidden_size = 8, .num_layers = 2, .dropout = 0.5};
    nn::GRU with(o, gen);
    o.dropout = 0;
    nn::GRU without(o, gen);
    without.load_state_dict(with.state_dict());
    NoGrad off;
    const Var x(Tensor::randn({5, 2, 3}, gen));
    with.eval();
    CHECK(max_abs_diff(with.forward(x).y.value(), without.forward(x).y.value()) == 0);
    with.train();
    const Tensor a = with.forward(x).y.value(), b = with.forward(x).y.value();
    CHECK(max_abs_diff(a, without.forward(x).y.value()) > 1e-3);
    CHECK(max_abs_diff(a, b) > 1e-3);  // a fresh mask per call
  }

  TEST_CASE("rnn: the tape holds one input GEMM per layer and direction, one step per time step") {
    Generator gen(2);
    nn::LSTM lstm({.input_size = 3,
                   .hidden_size = 4,
                   .num_layers = 2,
                   .batch_first = true,
                   .bidirectional = true},
                  gen);
    tape().clear();
    nn::RecurrentOutput out = lstm.forward(Var(Tensor::randn({2, 6, 3}, gen), true));
    std::map<std::string, int> count;
    for (size_t i = 0; i < tape().size(); ++i) ++count[tape().record(i).name()];
    CHECK(count["matmul"] == 4);
    CHECK(count["lstm_cell"] == 4 * 6);
    tape().clear();
  }

  TEST_CASE("rnn: running in two chunks with the carried state equals one run") {
    for (RecurrentMode mode : kModes) {
      CAPTURE(std::string(nn::recurrent_mode_name(mode)));
      Generator gen(4);
      nn::Recurrent m(
          mode, {.input_size = 2, .hidden_size = 3, .num_layers = 2, .batch_first = true}, gen);
      NoGrad off;
      const Var x(Tensor::randn({2, 7, 2}, gen));
      nn::RecurrentOutput whole = m.forward(x);
      nn::RecurrentOutput first = m.forward(slice(x, 1, 0, 3));
      nn::RecurrentOutput second = m.forward(slice(x, 1, 3, 7), first.state);
      CHECK(max_abs_diff(slice(whole.y, 1, 3, 7).value(), second.y.value()) < 1e-6);
      CHECK(max_abs_diff(whole.state.h.value(), second.state.h.value()) < 1e-6);
    }
  }

  TEST_CASE("rnn: truncated BPTT cuts the gradient at chunk boundaries and nowhere else") {
    Generator gen(6);
    nn::LSTM lstm({.input_size = 2, .hidden_size = 3, .batch_first = true}, gen);
    const Var x(Tensor::randn({2, 8, 2}, gen));
    const Tensor r = Tensor::randn({2, 8, 3}, gen);
    auto chunk_loss = [&](int64_t s, int64_t e, const std::optional<nn::RecurrentState>& st) {
      nn::RecurrentOutput o = lstm.forward(slice(x, 1, s, e), st);
      return nn::ChunkResult{sum(mul(o.y, slice(Var(r), 1, s, e))), o.state};
    };
    const Var& w = lstm.weights(0, 0).w_hh;
    auto grad_with_k = [&](int64_t k, double* total) {
      lstm.zero_grad();
      std::optional<nn::RecurrentState> state;
      int chunks = 0;
      *total = nn::truncated_bptt(8, k, state, chunk_loss, [&](int64_t, double) {
        CHECK(tape().size() == 0);  // each chunk's graph is gone after its backward
        ++chunks;
      });
      CHECK(chunks == (8 + k - 1) / k);
      REQUIRE(state);
      return w.grad().clone();
    };
    double loss4 = 0, loss8 = 0;
    const Tensor g4 = grad_with_k(4, &loss4), g8 = grad_with_k(8, &loss8);

    // The same two chunks by hand: the second starts from the first's detached final state.
    lstm.zero_grad();
    nn::ChunkResult a = chunk_loss(0, 4, std::nullopt);
    a.loss.backward();
    nn::ChunkResult b = chunk_loss(4, 8, a.state.detached());
    b.loss.backward();
    CHECK(max_abs_diff(w.grad(), g4) < 1e-6);

    // Full BPTT: the same loss value, a different gradient (it crosses the boundary).
    lstm.zero_grad();
    nn::ChunkResult full = chunk_loss(0, 8, std::nullopt);
    full.loss.backward();
    CHECK(std::abs(loss4 - full.loss.item()) < 1e-4);
    CHECK(std::abs(loss8 - full.loss.item()) < 1e-4);
    CHECK(max_abs_diff(w.grad(), g8) < 1e-6);
    CHECK(max_abs_diff(w.grad(), g4) > 1e-3);
  }

  TEST_CASE("rnn: shape errors name the layer and the shapes") {
    Generator gen(1);
    nn::GRU gru({.input_size = 3, .hidden_size = 4}, gen);
    CHECK_THROWS_WITH_AS(gru.forward(Var(Tensor::zeros({2, 5, 4}))), doctest::Contains("GRU"),
                         Error);
    CHECK_THROWS_WITH_AS(gru.forward(Var(Tensor::zeros({5, 2, 3})), std::nullopt, {5, 6}),
                         doctest::Contains("outside [0, T=5]"), Error);
    CHECK_THROWS_WITH_AS(
        gru.forward(Var(Tensor::zeros({5, 2, 3})),
                    nn::RecurrentState{Var(Tensor::zeros({2, 2, 4})), std::nullopt}),
        doctest::Contains("(1,2,4)"), Error);
  }
}

}  // namespace attn
