// A feed-forward block as a plugin: ReGLU, one of the gated linear units of Shazeer (2020, "GLU
// Variants Improve Transformer"):
//   y = w2( relu(w1 x) * (w3 x) )        w1, w3 (d_ff, d_model), w2 (d_model, d_ff)
// The built-in SwiGLU block is the same with silu in place of relu. w1 x decides, per hidden unit,
// how much of the value w3 x passes: a gate learned from the input, where the plain ReLU block
// relu(linear1 x) can only pass or cut its own value. Three matrices instead of two, so at the
// same d_ff it has 1.5 times the parameters of the ReLU block.
//
//   attnlab list --plugin build/libreglu.so                    # the row and its gradient check
//   attnlab train charlm --model gpt --ffn_block reglu --plugin build/libreglu.so
//   attnlab run ffn-memory --plugin build/libreglu.so          # recall vs width beside GELU
//
// The loader builds the block at d_model 8, d_ff 16 and checks its gradient in float along random
// directions before anything trains it (nn/float_gradient_check.h).
#include <cstdint>
#include <memory>

#include <attnlab/autograd/functional.h>
#include <attnlab/nn/linear.h>
#include <attnlab/nn/mixer/plugin.h>

namespace {

class ReGLU final : public attn::nn::FeedForwardBlock {
 public:
  ReGLU(int64_t d_model, int64_t d_ff, attn::Generator& gen) : FeedForwardBlock("ReGLU") {
    w1 = register_module("w1", std::make_shared<attn::nn::Linear>(d_model, d_ff, true, gen));
    w2 = register_module("w2", std::make_shared<attn::nn::Linear>(d_ff, d_model, true, gen));
    w3 = register_module("w3", std::make_shared<attn::nn::Linear>(d_model, d_ff, true, gen));
  }

  // x (..., d_model) -> (..., d_model)
  attn::Var forward(const attn::Var& x) const override {
    return w2->forward(attn::mul(attn::relu(w1->forward(x)), w3->forward(x)));
  }

  std::shared_ptr<attn::nn::Linear> w1, w2, w3;
};

}  // namespace

ATTN_PLUGIN(coursework_reglu) {
  registry.add_feed_forward({.name = "reglu",
                             .source = "Shazeer 2020, GLU Variants Improve Transformer",
                             .idea = "w2(relu(w1 x) * w3 x): a ReLU gate on a second linear map",
                             .make = [](int64_t d_model, int64_t d_ff, attn::Generator& gen) {
                               return std::make_shared<ReGLU>(d_model, d_ff, gen);
                             }});
}
