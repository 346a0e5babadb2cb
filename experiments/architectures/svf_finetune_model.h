// svf-finetune's model and its adapters: a small pre-norm encoder that tags every position of a
// marked string, whose linear maps can be routed through an adapter (SVF's z-vectors or LoRA)
// while the trained model itself stays frozen.
//
//   svf::TaskModel base(shape, gen);                 // trained on task A as usual
//   svf::freeze(base);                               // its parameters become constants
//   svf::SvfAdapter z_b(base);                       // one SvfLinear per adapted matrix
//   Var logits = base.forward(ids, z_b.route());     // ids (B,T) -> (B,T,V), W' = U diag(s z) V^T
//   Var mixed = base.forward(ids, z_b.route_with(z)); // the same under stored z-vectors
//
// The adapted matrices are, in every layer, the attention's q, k, v and output projections and
// the feed-forward block's two layers (adapted_linears() lists them in that order). Embeddings,
// norms and the readout are not adapted: Transformer² scales the singular values of the weight
// matrices only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "autograd/generator.h"
#include "nn/embedding.h"
#include "nn/finetune/lora_linear.h"
#include "nn/finetune/svf_linear.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/norms.h"

namespace attn::experiments::svf {

struct ModelShape {
  int64_t vocab = 0, seq_len = 0;  // tokens, positions (the marker included)
  int64_t d_model = 32, nhead = 2, num_layers = 2, dim_ff = 64;
};

// (index into adapted_linears(), input) -> output: how a forward pass applies linear map i.
using LinearRoute = std::function<Var(size_t, const Var&)>;

class TaskModel : public nn::Module {
 public:
  TaskModel(const ModelShape& shape, Generator& gen);
  // ids (B,T) -> logits (B,T,V); with a route, adapted linear i computes route(i, x).
  Var forward(const Tensor& ids, const LinearRoute& route = {}) const;
  // Per layer: q, k, v, out, ff1, ff2.
  const std::vector<std::shared_ptr<nn::Linear>>& adapted_linears() const { return adapted_; }
  const ModelShape& shape() const { return shape_; }

 private:
  Var block(const Var& x, int64_t layer, const LinearRoute& route) const;
  ModelShape shape_;
  std::shared_ptr<nn::Embedding> tok_, pos_;
  std::vector<std::shared_ptr<nn::LayerNorm>> ln_attn_, ln_ff_;
  std::vector<std::shared_ptr<nn::Linear>> adapted_;
  std::shared_ptr<nn::LayerNorm> ln_out_;
  std::shared_ptr<nn::Linear> readout_;
};

// Turns every parameter of m into a constant (no gradient reaches it any more), so that a
// fine-tuning that trains an adapter leaves the base model exactly as it was.
void freeze(const nn::Module& m);

// One z per adapted matrix, in adapted_linears() order.
using ZVectors = std::vector<Tensor>;

// SVF: an SvfLinear per adapted matrix of a (frozen) base; its parameters are the z-vectors.
class SvfAdapter : public nn::Module {
 public:
  explicit SvfAdapter(const TaskModel& base);
  LinearRoute route() const;                        // each layer under its own z
  LinearRoute route_with(const ZVectors& z) const;  // under given z-vectors (constants)
  ZVectors z_values() const;                        // copies of the trained z
  ZVectors ones() const;                            // the z that gives back the base model
  std::vector<std::shared_ptr<nn::SvfLinear>> layers;
};

// z = a x + (1 - a) y, matrix by matrix.
ZVectors mix(const ZVectors& x, const ZVectors& y, double a);

// LoRA of the given rank (alpha = rank, so the update's scale is 1) on every adapted matrix.
class LoraAdapter : public nn::Module {
 public:
  LoraAdapter(const TaskModel& base, int64_t rank, Generator& gen);
  LinearRoute route() const;
  std::vector<std::shared_ptr<nn::LoraLinear>> layers;
};

}  // namespace attn::experiments::svf
