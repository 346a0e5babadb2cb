// The open registry of feed-forward blocks: a student's position-wise block (a gated unit, a
// small mixture of experts, ...) added from a shared library (nn/mixer/plugin.h,
// registry.add_feed_forward) and used in place of the built-in activation's block of every
// transformer layer: `attnlab train --model gpt --feed_forward NAME --plugin FILE.so`, or in code
// through TransformerLayerOptions::feed_forward (DecoderOnlyOptions, EncoderOnlyOptions).
//
//   class ReGLU final : public nn::FeedForwardBlock {
//    public:
//     ReGLU(int64_t d, int64_t d_ff, Generator& g) : FeedForwardBlock("ReGLU") {
//       gate = register_module("gate", std::make_shared<nn::Linear>(d, d_ff, true, g));
//       value = register_module("value", std::make_shared<nn::Linear>(d, d_ff, true, g));
//       out = register_module("out", std::make_shared<nn::Linear>(d_ff, d, true, g));
//     }
//     Var forward(const Var& x) const override {             // x (..., d) -> (..., d)
//       return out->forward(mul(relu(gate->forward(x)), value->forward(x)));
//     }
//     std::shared_ptr<nn::Linear> gate, value, out;
//   };
//   nn::feed_forward_registry().add({.name = "reglu", .source = "Shazeer 2020", .idea = "...",
//       .make = [](int64_t d, int64_t d_ff, Generator& g) {
//         return std::make_shared<ReGLU>(d, d_ff, g); }});
//
// A block is a Module (its parameters join the model's: optimizer, checkpoint, parameter count,
// under layers.N.feed_forward.*) with one forward; the layer puts its own dropout, residual and
// norm around it, as around the built-in block. The registry is empty until a plugin loads. The
// built-in activations keep their names (relu, gelu, gelu_tanh, swiglu): no row may take one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autograd/generator.h"
#include "nn/float_gradient_check.h"
#include "nn/module.h"

namespace attn::nn {

class FeedForwardBlock : public Module {
 public:
  using Module::Module;
  virtual Var forward(const Var& x) const = 0;  // x (..., d_model) -> (..., d_model)
};

struct FeedForwardRow {
  std::string name;    // as typed after --feed_forward, e.g. "reglu"
  std::string source;  // where the block comes from (a paper, the student's own words)
  std::string idea;    // one line for a report's table
  std::function<std::shared_ptr<FeedForwardBlock>(
      int64_t d_model, int64_t dim_feedforward, Generator& gen)>
      make;
  std::string origin;  // "" for a built-in; the plugin file that added the row
};

class FeedForwardRegistry {
 public:
  // Adds a row. Throws attn::UsageError when the name is not a plain word ([A-Za-z0-9_.-]), is a
  // built-in activation's or another row's (ignoring case), or the row has no .make.
  void add(FeedForwardRow row);
  const FeedForwardRow* find(const std::string& name) const;  // exact name, or nullptr
  const std::vector<FeedForwardRow>& rows() const { return rows_; }
  std::vector<std::string> names() const;

 private:
  std::vector<FeedForwardRow> rows_;
};

// The process's registry (empty until a plugin loads).
FeedForwardRegistry& feed_forward_registry();

// The row called `name`'s block for (d_model, dim_feedforward). Throws attn::UsageError when no
// row has that name (naming the registered ones), attn::Error when the factory returns null.
std::shared_ptr<FeedForwardBlock> make_feed_forward(const std::string& name,
                                                    int64_t d_model,
                                                    int64_t dim_feedforward,
                                                    Generator& gen);

// The gradient check every plugin row passes before anything trains it: the block built at
// d_model 8, dim_feedforward 16, in eval mode, checked on x (2,6,8) over x and every parameter
// (nn/float_gradient_check.h). A wrong output shape is a failed check with wrong_shape set;
// exceptions from the factory or forward propagate.
FloatGradientCheck check_feed_forward_gradient(const FeedForwardRow& row, uint64_t seed = 7);

}  // namespace attn::nn
