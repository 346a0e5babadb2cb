// The open feed-forward registry (nn/feedforward_registry.h): names (no built-in activation's, no
// other row's), the gradient check every plugin block passes, and a row inside a
// DecoderOnlyTransformer: a row that re-implements the built-in ReLU block gives the built-in
// model's logits, its parameters are the model's.
#include <doctest/doctest.h>

#include <cstdio>
#include <memory>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/tape.h"
#include "nn/feedforward_registry.h"
#include "nn/linear.h"
#include "nn/transformer/decoder_layer.h"
#include "nn/transformer/decoder_only.h"

namespace attn::nn {

namespace {

// linear2(relu(linear1 x)), built in the order the built-in layer builds its block.
class ReluBlock final : public FeedForwardBlock {
 public:
  ReluBlock(int64_t d, int64_t d_ff, Generator& g, bool wrong_shape = false)
      : FeedForwardBlock("ReluBlock"), wrong_shape_(wrong_shape) {
    linear1 = register_module("linear1", std::make_shared<Linear>(d, d_ff, true, g));
    linear2 = register_module("linear2", std::make_shared<Linear>(d_ff, d, true, g));
  }
  Var forward(const Var& x) const override {
    const Var h = relu(linear1->forward(x));
    return wrong_shape_ ? h : linear2->forward(h);
  }
  std::shared_ptr<Linear> linear1, linear2;

 private:
  bool wrong_shape_;
};

FeedForwardRow relu_row(const std::string& name, bool wrong_shape = false) {
  return {name, "test", "the built-in ReLU block again",
          [wrong_shape](int64_t d, int64_t d_ff, Generator& g) {
            return std::make_shared<ReluBlock>(d, d_ff, g, wrong_shape);
          }};
}

// x * x whose backward drops the factor 2 (dx = dy x).
struct HalfSquareOp final : Op {
  void backward() override {
    const Tensor& x = inputs[0].value();
    Tensor dx = Tensor::empty(x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) dx[i] = dy()[i] * x[i];
    accumulate(0, dx);
  }
  const char* name() const override { return "half_square"; }
};

class HalfSquareBlock final : public FeedForwardBlock {
 public:
  HalfSquareBlock(int64_t d, Generator& g) : FeedForwardBlock("HalfSquareBlock") {
    lin = register_module("lin", std::make_shared<Linear>(d, d, true, g));
  }
  Var forward(const Var& x) const override {
    const Var h = lin->forward(x);
    Tensor y = h.value().clone();
    for (int64_t i = 0; i < y.numel(); ++i) y[i] = y[i] * y[i];
    return record(std::make_unique<HalfSquareOp>(), {h}, std::move(y));
  }
  std::shared_ptr<Linear> lin;
};

std::string refusal(FeedForwardRegistry& r, FeedForwardRow row) {
  try {
    r.add(std::move(row));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

// The process's registry holds `row` for the life of the scope, then is as it was.
struct Registered {
  explicit Registered(FeedForwardRow row) : saved(feed_forward_registry()) {
    feed_forward_registry().add(std::move(row));
  }
  ~Registered() { feed_forward_registry() = saved; }
  FeedForwardRegistry saved;
};

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("feed-forward registry: no built-in activation's name, no other row's, valid words") {
    FeedForwardRegistry r;
    for (const char* taken : {"relu", "GELU", "Gelu_Tanh", "swiglu"})
      CHECK(refusal(r, relu_row(taken)).find("is taken (the built-in activation") !=
            std::string::npos);
    CHECK(refusal(r, relu_row("ReLU")) ==
          "feed-forward name 'ReLU' is taken (the built-in activation 'relu'); choose another");
    FeedForwardRow mine = relu_row("reglu");
    mine.origin = "mine.so";
    r.add(mine);
    CHECK(
        refusal(r, relu_row("ReGLU")) ==
        "feed-forward name 'ReGLU' is taken (feed-forward 'reglu', from mine.so); choose another");
    CHECK(refusal(r, relu_row("two words")).find("must be non-empty") != std::string::npos);
    FeedForwardRow no_make = relu_row("empty");
    no_make.make = nullptr;
    CHECK(refusal(r, no_make) == "feed-forward 'empty' has no factory (.make)");
    CHECK(r.names() == std::vector<std::string>{"reglu"});
    CHECK(feed_forward_registry().find("reglu") == nullptr);  // a copy: the process's is as it was
  }

  TEST_CASE("feed-forward check: a correct block passes, a wrong backward or shape fails") {
    const FloatGradientCheck ok = check_feed_forward_gradient(relu_row("relu-again"));
    std::printf("  relu-again worst |a - n| / tolerance = %.4f\n", ok.worst_ratio);
    // Passes, though less far inside than the smooth mixers (0.43 here, against their 0.07-0.08):
    // a ReLU input near its kink moves the central differences, and their spread with them.
    CHECK_MESSAGE(ok.ok, ok.detail);
    const FloatGradientCheck wrong = check_feed_forward_gradient(
        {"half-square", "test", "",
         [](int64_t d, int64_t, Generator& g) { return std::make_shared<HalfSquareBlock>(d, g); }});
    std::printf("  half-square worst |a - n| / tolerance = %.1f\n", wrong.worst_ratio);
    CHECK_FALSE(wrong.ok);
    CHECK_FALSE(wrong.wrong_shape);
    CHECK(wrong.worst_ratio > 10);
    const FloatGradientCheck shape = check_feed_forward_gradient(relu_row("wide", true));
    CHECK_FALSE(shape.ok);
    CHECK(shape.wrong_shape);
    CHECK(shape.detail ==
          "feed-forward 'wide' maps (2,6,8) to (2,6,16): a layer checked here "
          "returns its input's shape");
  }
}

TEST_SUITE("nn") {
  TEST_CASE("feed-forward row in a DecoderOnlyTransformer: the ReLU block again = the built-in") {
    const Registered relu_again(relu_row("relu-again"));
    DecoderOnlyOptions o;
    o.vocab_size = 11, o.max_len = 8, o.d_model = 16, o.nhead = 2, o.num_layers = 2;
    o.dim_feedforward = 24, o.dropout = 0, o.activation = Activation::kReLU;
    Generator g1(5), g2(5);
    DecoderOnlyTransformer builtin(o, g1);
    o.feed_forward = "relu-again";
    DecoderOnlyTransformer plugin(o, g2);
    Tensor ids({2, 6});
    for (int64_t i = 0; i < ids.numel(); ++i) ids[i] = static_cast<real>((i * 7) % 11);
    const Tensor a = builtin.forward(ids).value(), b = plugin.forward(ids).value();
    tape().clear();
    REQUIRE(a.shape() == b.shape());
    for (int64_t i = 0; i < a.numel(); ++i) REQUIRE(a[i] == doctest::Approx(b[i]).epsilon(1e-6));
    // Its parameters are the model's (optimizer, checkpoint, counts), under their own names.
    CHECK(plugin.num_parameters() == builtin.num_parameters());
    bool named = false;
    for (const auto& [name, p] : plugin.named_parameters())
      named = named || name == "layers.1.feed_forward.linear2.weight";
    CHECK(named);
    CHECK((*plugin.layers)[0].linear1 == nullptr);
  }

  TEST_CASE("feed-forward row: an unknown name and the decoder layer are refused") {
    DecoderOnlyOptions o;
    o.vocab_size = 11, o.max_len = 8, o.d_model = 16, o.nhead = 2, o.num_layers = 1;
    o.feed_forward = "no-such-block";
    Generator g(1);
    try {
      DecoderOnlyTransformer m(o, g);
      FAIL("an unknown block was accepted");
    } catch (const UsageError& e) {
      CHECK(std::string(e.what()).find("feed-forward 'no-such-block' is not a registered block") !=
            std::string::npos);
    }
    const Registered relu_again(relu_row("relu-again"));
    TransformerLayerOptions lo;
    lo.d_model = 16, lo.nhead = 2, lo.feed_forward = "relu-again";
    CHECK_THROWS_AS(TransformerDecoderLayer(lo, g), Error);
  }
}

}  // namespace attn::nn
