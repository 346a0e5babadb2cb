#include "experiments/interpretability/position_readout.h"

#include "autograd/functional.h"
#include "autograd/mode.h"

namespace attn::experiments {

ReadoutTraining::ReadoutTraining(const Config& cfg, uint64_t run_seed)
    : model(read_model(cfg)),
      optimizer(read_optimizer(cfg)),
      eval_size(read_eval(cfg).eval_size),
      eval_every(read_eval(cfg).eval_every),
      seeds(cfg.get_int("seeds")),
      seed(run_seed) {}

PositionReadout::PositionReadout(const std::string& name,
                                 const train::options::ModelSettings& m,
                                 const ReadoutShape& shape,
                                 Generator& gen)
    : Module(name), d_model_(m.d_model), shape_(shape) {
  tok_ = register_module("tok", std::make_shared<nn::Embedding>(shape.vocabulary, m.d_model, gen));
  pos_ = register_module(
      "pos", std::make_shared<nn::LearnedPositionalEmbedding>(shape.length, m.d_model, gen));
  nn::TransformerLayerOptions o;
  o.d_model = m.d_model;
  o.nhead = m.nhead;
  o.dim_feedforward = m.dim_ff;
  o.dropout = 0;
  o.norm_first = true;
  layers_ =
      register_module("layers", std::make_shared<nn::ModuleList<nn::TransformerEncoderLayer>>());
  for (int64_t l = 0; l < m.num_layers; ++l)
    layers_->append(std::make_shared<nn::TransformerEncoderLayer>(o, gen));
  norm_ = register_module("norm", std::make_shared<nn::LayerNorm>(m.d_model));
  head_ =
      register_module("head", std::make_shared<nn::Linear>(m.d_model, shape.classes, true, gen));
}

Var PositionReadout::encode(const Tensor& ids) {
  Var x = pos_->forward(tok_->forward(ids));
  for (const auto& layer : *layers_) x = layer->forward(x);
  const int64_t at = shape_.read_at;
  return norm_->forward(reshape(slice(x, 1, at, at + 1), {ids.size(0), d_model_}));  // (B,d)
}

Var PositionReadout::forward(const Tensor& ids) {
  return head_->forward(encode(ids));
}

Tensor PositionReadout::read_vector(const Tensor& ids) {
  NoGrad off;
  return encode(ids).value();
}

Tensor PositionReadout::attention_rows(int64_t layer, const Tensor& ids) {
  NoGrad off;
  encode(ids);
  const Tensor& w = (*layers_)[static_cast<size_t>(layer)].self_attn->last_weights();  // (B,H,T,T)
  const int64_t batch = w.size(0), heads = w.size(1), t = shape_.length, at = shape_.read_at;
  Tensor rows({batch, t});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t k = 0; k < t; ++k)
        rows[b * t + k] += w[((b * heads + h) * t + at) * t + k] / static_cast<real>(heads);
  return rows;
}

Tensor PositionReadout::static_embedding(const Tensor& ids) {
  NoGrad off;
  const int64_t at = shape_.read_at;
  const Var e = tok_->forward(ids);  // (B,T,d)
  return reshape(slice(e, 1, at, at + 1), {ids.size(0), d_model_}).value();
}

}  // namespace attn::experiments
