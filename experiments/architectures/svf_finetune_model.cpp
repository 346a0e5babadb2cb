// svf-finetune's model and adapters (svf_finetune_model.h).
#include "experiments/architectures/svf_finetune_model.h"

#include <string>

#include <fmt/format.h>

#include "autograd/functional.h"
#include "nn/attention/sdpa.h"

namespace attn::experiments::svf {

namespace {
constexpr size_t kPerLayer = 6;  // q, k, v, out, ff1, ff2
}

TaskModel::TaskModel(const ModelShape& shape, Generator& gen)
    : Module("SvfTaskModel"), shape_(shape) {
  tok_ = register_module("tok", std::make_shared<nn::Embedding>(shape.vocab, shape.d_model, gen));
  pos_ = register_module("pos", std::make_shared<nn::Embedding>(shape.seq_len, shape.d_model, gen));
  const char* names[kPerLayer] = {"q", "k", "v", "out", "ff1", "ff2"};
  for (int64_t l = 0; l < shape.num_layers; ++l) {
    const std::string p = fmt::format("layer{}_", l);
    ln_attn_.push_back(
        register_module(p + "ln_attn", std::make_shared<nn::LayerNorm>(shape.d_model)));
    ln_ff_.push_back(register_module(p + "ln_ff", std::make_shared<nn::LayerNorm>(shape.d_model)));
    for (size_t i = 0; i < kPerLayer; ++i) {
      const int64_t in = i == 5 ? shape.dim_ff : shape.d_model;
      const int64_t out = i == 4 ? shape.dim_ff : shape.d_model;
      adapted_.push_back(
          register_module(p + names[i], std::make_shared<nn::Linear>(in, out, true, gen)));
    }
  }
  ln_out_ = register_module("ln_out", std::make_shared<nn::LayerNorm>(shape.d_model));
  readout_ = register_module("readout",
                             std::make_shared<nn::Linear>(shape.d_model, shape.vocab, true, gen));
}

// Pre-norm: x + attention(ln(x)), then x + ff2(relu(ff1(ln(x)))); no mask (an encoder).
Var TaskModel::block(const Var& x, int64_t layer, const LinearRoute& route) const {
  const size_t base = static_cast<size_t>(layer) * kPerLayer;
  auto lin = [&](size_t i, const Var& in) {
    return route ? route(base + i, in) : adapted_[base + i]->forward(in);
  };
  const Var h = ln_attn_[static_cast<size_t>(layer)]->forward(x);
  const Var q = nn::split_heads(lin(0, h), shape_.nhead);
  const Var k = nn::split_heads(lin(1, h), shape_.nhead);
  const Var v = nn::split_heads(lin(2, h), shape_.nhead);
  const Var a = nn::merge_heads(nn::scaled_dot_product_attention(q, k, v).out);
  const Var x1 = add(x, lin(3, a));
  const Var f = relu(lin(4, ln_ff_[static_cast<size_t>(layer)]->forward(x1)));
  return add(x1, lin(5, f));
}

Var TaskModel::forward(const Tensor& ids, const LinearRoute& route) const {
  const int64_t t = ids.size(1);
  Tensor positions({1, t});
  for (int64_t i = 0; i < t; ++i) positions[i] = static_cast<real>(i);
  Var x = add(tok_->forward(ids), pos_->forward(positions));  // (B,T,E) + (1,T,E)
  for (int64_t l = 0; l < shape_.num_layers; ++l) x = block(x, l, route);
  return readout_->forward(ln_out_->forward(x));
}

void freeze(const nn::Module& m) {
  for (const Var& p : m.parameters()) p.node().requires_grad = false;
}

SvfAdapter::SvfAdapter(const TaskModel& base) : Module("SvfAdapter") {
  const auto& linears = base.adapted_linears();
  for (size_t i = 0; i < linears.size(); ++i)
    layers.push_back(
        register_module(fmt::format("svf{}", i), std::make_shared<nn::SvfLinear>(*linears[i])));
}

LinearRoute SvfAdapter::route() const {
  return [this](size_t i, const Var& x) { return layers[i]->forward(x); };
}

LinearRoute SvfAdapter::route_with(const ZVectors& z) const {
  return
      [this, z](size_t i, const Var& x) { return layers[i]->forward_with(x, Var::constant(z[i])); };
}

ZVectors SvfAdapter::z_values() const {
  ZVectors z;
  for (const auto& l : layers) z.push_back(l->z.value().clone());
  return z;
}

ZVectors SvfAdapter::ones() const {
  ZVectors z;
  for (const auto& l : layers) z.push_back(Tensor::ones({l->num_singular()}));
  return z;
}

ZVectors mix(const ZVectors& x, const ZVectors& y, double a) {
  ZVectors z;
  for (size_t i = 0; i < x.size(); ++i) {
    Tensor m({x[i].numel()});
    for (int64_t j = 0; j < m.numel(); ++j)
      m[j] = static_cast<real>(a * x[i][j] + (1 - a) * y[i][j]);
    z.push_back(m);
  }
  return z;
}

LoraAdapter::LoraAdapter(const TaskModel& base, int64_t rank, Generator& gen)
    : Module("LoraAdapter") {
  const auto& linears = base.adapted_linears();
  for (size_t i = 0; i < linears.size(); ++i)
    layers.push_back(register_module(
        fmt::format("lora{}", i),
        std::make_shared<nn::LoraLinear>(*linears[i], rank, static_cast<double>(rank), gen)));
}

LinearRoute LoraAdapter::route() const {
  return [this](size_t i, const Var& x) { return layers[i]->forward(x); };
}

}  // namespace attn::experiments::svf
