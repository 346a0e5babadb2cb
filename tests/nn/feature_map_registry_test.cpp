// The open registry of linear attention's feature maps (nn/attention/feature_map_registry.h):
// names, and the checks every read of a row's features passes through.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/attention/feature_map_registry.h"
#include "nn/attention/linear_attention.h"

namespace attn::nn {

namespace {

FeatureMapRow row(const std::string& name, std::function<Var(const Var&)> phi) {
  return {.name = name, .source = "test", .idea = "test map", .phi = std::move(phi)};
}

FeatureMapRow elu_row(const std::string& name) {
  return row(name, elu_feature_map);
}

std::string refusal(FeatureMapRegistry& r, FeatureMapRow added) {
  try {
    r.add(std::move(added));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::string error_of(const FeatureMapRow& r, const Var& x) {
  try {
    feature_map_of(r, x);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("feature map registry: plain names, no reserved readout's, no repeats ignoring case") {
    FeatureMapRegistry r;
    r.add(elu_row("elu-again"));
    CHECK(r.find("elu-again") != nullptr);
    CHECK(r.find("ELU-AGAIN") == nullptr);  // find is exact; add compares ignoring case
    CHECK(has(refusal(r, elu_row("Elu-Again")), "is taken (feature map 'elu-again', built in)"));
    CHECK(has(refusal(r, elu_row("Softmax")), "attnlab's own 'softmax' readout"));
    CHECK(has(refusal(r, elu_row("polar")), "attnlab's own 'polar' readout"));
    CHECK(has(refusal(r, elu_row("two words")), "only letters"));
    CHECK(has(refusal(r, row("no-map", nullptr)), "has no map (.phi)"));
    CHECK(r.rows().size() == 1);
  }

  TEST_CASE("feature_map_of passes good features through and refuses bad ones by name") {
    Generator gen(3);
    const Var x = Var::constant(Tensor::randn({1, 2, 5, 4}, gen));
    const Var f = feature_map_of(elu_row("ok"), x);
    CHECK(f.shape() == Shape{1, 2, 5, 4});
    const Var doubled = feature_map_of(row("pair",
                                           [](const Var& v) {
                                             return concat({relu(v), relu(neg(v))}, 3);
                                           }),
                                       x);
    CHECK(doubled.shape() == Shape{1, 2, 5, 8});  // F is the map's own
    CHECK(has(error_of(row("raw", [](const Var& v) { return v; }), x),
              "feature map 'raw': feature "));  // randn has negative entries
    CHECK(has(error_of(row("raw", [](const Var& v) { return v; }), x), "must be finite and >= 0"));
    CHECK(has(error_of(row("pooled", [](const Var& v) { return sum(v, 2, true); }), x),
              "maps x (1,2,5,4) to (1,2,1,4)"));
    const real inf = std::numeric_limits<real>::infinity();
    CHECK(has(error_of(row("inf", [inf](const Var& v) { return add_scalar(relu(v), inf); }), x),
              "is inf"));
  }
}

}  // namespace attn::nn
