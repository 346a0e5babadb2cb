// Both paths proven equal: every row of the layer registry (nn/registry/layer_cases.h) runs in
// reference mode (elementary ops only) and in fast mode (fused ops) from the same weights and
// inputs, and the outputs and the gradients of every parameter and input must agree. The
// reference run's tape must also hold no fused op.
//
// Tolerance: the two paths round differently (a bias added inside the GEMM or after it, the
// 1/sqrt(d) in the GEMM's alpha or in mul_scalar, a fused softmax), each op by a few units in
// the last place. Those differences can add up along the chain of ops, so the bound is a few
// float epsilons per recorded op, on the error relative to the tensor's largest entry (or to 1,
// for tensors whose entries are all below 1, as in the parity suite):
//   max|fast - reference| / max(1, max|reference|) <= 8 eps * (ops on the reference tape)
// (about 1e-5 for a single layer of ten ops, 1e-4 for a two-layer model).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "autograd/functional.h"
#include "autograd/mode.h"
#include "nn/attention/multihead_attention.h"
#include "nn/registry/layer_cases.h"
#include "nn/transformer/encoder_layer.h"

namespace attn::nn {

namespace {

// The ops that exist only on the fast path.
const std::set<std::string> kFusedOps{"linear",          "linear_relu",     "gelu_linear",
                                      "fused_attention", "attention_probs", "attention_weights",
                                      "tril_matmul",     "masked_softmax",  "selective_scan"};

struct PathRun {
  Tensor out;
  std::vector<Tensor> grads;  // one per leaf, in the row's order
  std::vector<std::string> ops;
};

PathRun run_path(const LayerCase& row, bool reference) {
  ReferenceModeScope mode(reference);
  tape().clear();
  Generator gen(1234);
  LayerInstance layer = row.build(gen);
  PathRun r;
  Var y = layer.forward();
  for (size_t i = 0; i < tape().size(); ++i) r.ops.push_back(tape().record(i).name());
  // loss = sum(y * G) with a fixed G, so every output element sends a different gradient.
  Generator upstream(99);
  sum(mul(y, Var::constant(Tensor::randn(y.shape(), upstream)))).backward();
  r.out = y.value();
  for (const Var& leaf : layer.leaves)
    r.grads.push_back(leaf.has_grad() ? leaf.grad() : Tensor::zeros(leaf.shape()));
  tape().clear();
  return r;
}

// max|a - b| / max(1, max|b|) (b the reference), the parity suite's measure: relative for
// large values, absolute below 1. A gradient that is 0 in exact arithmetic (attention's key bias:
// adding the same number to every score of a row does not change its softmax) comes out as
// rounding noise on both paths, which a purely relative measure would blow up.
double relative_error(const Tensor& a, const Tensor& b) {
  double worst = 0, scale = 1;
  for (int64_t i = 0; i < a.numel(); ++i) {
    worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::abs(double(b[i])));
  }
  return worst / scale;
}

// The op names a forward of `run` puts on the tape, in order; the printed tape as a MESSAGE.
template <class Run>
std::vector<std::string> tape_of(bool reference, const char* what, Run&& run) {
  ReferenceModeScope mode(reference);
  tape().clear();
  run();
  std::vector<std::string> ops;
  for (size_t i = 0; i < tape().size(); ++i) ops.push_back(tape().record(i).name());
  MESSAGE(what, reference ? " (reference):\n" : " (fast):\n", tape().to_string());
  tape().clear();
  return ops;
}

bool has(const std::vector<std::string>& ops, const std::string& op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

}  // namespace

TEST_SUITE("nn") {
  TEST_CASE("reference mode: the switch, its scope and the path names") {
    const bool before = reference_mode();
    {
      ReferenceModeScope on(true);
      CHECK(reference_mode());
      CHECK(std::string(path_name()) == "reference");
      {
        ReferenceModeScope off(false);
        CHECK(!reference_mode());
        CHECK(std::string(path_name()) == "fast");
      }
      CHECK(reference_mode());
    }
    CHECK(reference_mode() == before);
  }

  TEST_CASE("reference mode: the tapes of multi-head attention and a transformer block") {
    Generator gen(3);
    MultiheadAttention mha(8, 2, gen);
    TransformerLayerOptions o;
    o.d_model = 8, o.nhead = 2, o.dim_feedforward = 16, o.dropout = 0;
    o.activation = Activation::kGELU, o.norm_first = true;
    TransformerEncoderLayer block(o, gen);
    const Var x(Tensor::randn({2, 3, 8}, gen), true);
    auto mha_run = [&] { mha.forward(x, x, x, {.causal = true}); };
    auto block_run = [&] { block.forward(x, {.causal = true}); };
    const auto mha_ref = tape_of(true, "MultiheadAttention, causal", mha_run);
    const auto mha_fast = tape_of(false, "MultiheadAttention, causal", mha_run);
    const auto block_ref = tape_of(true, "TransformerEncoderLayer, pre-norm GELU", block_run);
    const auto block_fast = tape_of(false, "TransformerEncoderLayer, pre-norm GELU", block_run);
    // The reference path spells attention out: matmul, mul_scalar, masked_fill, softmax, matmul.
    for (const auto* ops : {&mha_ref, &block_ref}) {
      for (const char* op : {"matmul", "add", "mul_scalar", "masked_fill", "softmax"})
        CHECK_MESSAGE(has(*ops, op), std::string(op));
      for (const std::string& op : *ops) CHECK_MESSAGE(kFusedOps.count(op) == 0, op);
    }
    CHECK(has(block_ref, "gelu"));
    CHECK(has(block_ref, "layer_norm"));
    // The fast path takes the fused kernels.
    CHECK(has(mha_fast, "fused_attention"));
    CHECK(has(mha_fast, "linear"));
    CHECK(has(block_fast, "fused_attention"));
    CHECK(has(block_fast, "gelu_linear"));
    CHECK(!has(block_fast, "softmax"));
  }

  TEST_CASE("every layer registry row: the reference and fast paths agree, outputs and gradients") {
    const auto& rows = layer_cases();
    REQUIRE(rows.size() > 0);
    for (const LayerCase& row : rows) {
      SUBCASE(row.name.c_str()) {
        const PathRun ref = run_path(row, true), fast = run_path(row, false);
        for (const std::string& op : ref.ops) {
          INFO(row.name, ": the reference tape holds the fused op '", op, "'");
          CHECK(kFusedOps.count(op) == 0);
        }
        const double tol =
            8 * std::numeric_limits<real>::epsilon() * static_cast<double>(ref.ops.size());
        REQUIRE(fast.out.shape() == ref.out.shape());
        double worst = relative_error(fast.out, ref.out);
        std::string worst_what = "output";
        REQUIRE(fast.grads.size() == ref.grads.size());
        for (size_t i = 0; i < ref.grads.size(); ++i) {
          REQUIRE(fast.grads[i].shape() == ref.grads[i].shape());
          const double e = relative_error(fast.grads[i], ref.grads[i]);
          if (e > worst) worst = e, worst_what = fmt::format("gradient of leaf {}", i);
        }
        MESSAGE(fmt::format("{:<32} ops ref={:<4} fast={:<4} worst {:.2e} ({}), bound {:.2e}",
                            row.name, ref.ops.size(), fast.ops.size(), worst, worst_what, tol));
        INFO(row.name, ": worst ", worst_what);
        CHECK(worst <= tol);
      }
    }
  }
}

}  // namespace attn::nn
