// linear-vs-softmax-recall's readouts (experiments/efficient/recall_methods.h): a plugin's feature
// map enters after the three built-ins and is read exactly as they are.
#include <doctest/doctest.h>

#include "autograd/functional.h"
#include "autograd/tape.h"
#include "experiments/efficient/recall_methods.h"
#include "nn/attention/feature_map_registry.h"
#include "nn/attention/linear_attention.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("recall methods: a registered feature map follows the built-ins, read as they are") {
    const nn::FeatureMapRegistry saved = nn::feature_map_registry();
    CHECK(recall_methods(3).size() == 3);
    nn::feature_map_registry().add({.name = "elu-again",
                                    .source = "test",
                                    .idea = "elu + 1 as a row",
                                    .phi = nn::elu_feature_map,
                                    .origin = "test.so"});
    const std::vector<RecallMethod> ms = recall_methods(3);
    nn::feature_map_registry() = saved;  // other tests see no row
    REQUIRE(ms.size() == 4);
    CHECK(ms[0].key == "softmax");
    CHECK(ms[1].key == "elu");
    CHECK(ms[2].key == "polar");
    CHECK(ms[2].name == "polar^3");
    CHECK(ms[3].name == "elu-again");
    CHECK(ms[3].key == "plugin_elu-again");
    // elu + 1 written as a row reads what nn::linear_attention reads, to float rounding.
    NoGrad off;
    Generator gen(5);
    const Var k = Var::constant(Tensor::randn({1, 1, 12, 8}, gen));
    const Var v = Var::constant(Tensor::randn({1, 1, 12, 8}, gen));
    const Tensor a = ms[1].attend(k, k, v).value(), b = ms[3].attend(k, k, v).value();
    REQUIRE(a.shape() == b.shape());
    for (int64_t i = 0; i < a.numel(); ++i) CHECK(b[i] == doctest::Approx(a[i]).epsilon(1e-5));
  }
}

}  // namespace attn::experiments
