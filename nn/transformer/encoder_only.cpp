#include "nn/transformer/encoder_only.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/init.h"
#include "nn/positional/sinusoidal.h"

namespace attn::nn {

MlmHead::MlmHead(int64_t d_model, int64_t vocab_size, double eps, bool tied, Generator& gen)
    : Module("MlmHead") {
  dense = register_module("dense", std::make_shared<Linear>(d_model, d_model, true, gen));
  norm = register_module("norm", std::make_shared<LayerNorm>(d_model, eps));
  if (!tied)
    decoder = register_module("decoder", std::make_shared<Linear>(d_model, vocab_size, false, gen));
  bias = register_parameter("bias", Tensor::zeros({vocab_size}));
}

Var MlmHead::forward(const Var& h, const Var& tied_weight) const {
  const Var z = norm->forward(gelu(dense->forward(h)));
  return add(decoder ? decoder->forward(z) : matmul(z, tied_weight, false, true), bias);
}

EncoderOnlyTransformer::EncoderOnlyTransformer(const EncoderOnlyOptions& o,
                                               Generator& gen,
                                               std::shared_ptr<Generator> dropout_gen)
    : Module("EncoderOnlyTransformer"),
      opt_(o),
      dropout_gen_(model_dropout_generator(std::move(dropout_gen), gen)) {
  if (o.vocab_size <= 0 || o.num_layers <= 0)
    throw Error(fmt::format(
        "EncoderOnlyTransformer: vocab_size and num_layers must be positive, got {} and {}",
        o.vocab_size, o.num_layers));
  tok_emb = register_module("tok_emb",
                            std::make_shared<Embedding>(o.vocab_size, o.d_model, gen, o.pad_id));
  init::normal_(tok_emb->weight.value(), gen, 0.0, o.init_std);
  tok_emb->zero_padding_row();
  if (o.positions == PositionKind::kLearned)
    pos_emb = register_module("pos_emb", std::make_shared<LearnedPositionalEmbedding>(
                                             o.max_len, o.d_model, gen, o.init_std));
  if (o.positions == PositionKind::kSinusoidal) pe_ = sinusoidal_table(o.max_len, o.d_model);
  if (o.positions == PositionKind::kT5Bias)
    rel_bias = register_module("rel_bias", t5_model_bias(o.nhead, o.d_model, true, gen));
  emb_norm = register_module("emb_norm", std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps));
  drop = register_module("drop", std::make_shared<Dropout>(o.dropout, dropout_gen_));
  layers = register_module("layers", std::make_shared<ModuleList<TransformerEncoderLayer>>());
  TransformerLayerOptions lo = o;
  lo.rope.reset();
  if (o.positions == PositionKind::kRope) lo.rope = o.rope_style;
  for (int64_t i = 0; i < o.num_layers; ++i)
    layers->append(std::make_shared<TransformerEncoderLayer>(lo, gen, dropout_gen_));
  mlm_head = register_module(
      "mlm_head",
      std::make_shared<MlmHead>(o.d_model, o.vocab_size, o.layer_norm_eps, o.tie_weights, gen));
}

Var EncoderOnlyTransformer::encode(const Tensor& ids,
                                   const std::optional<Tensor>& key_padding_mask) {
  if (ids.rank() != 2)
    throw Error("EncoderOnlyTransformer: ids must be (B,T), got " + shape_str(ids.shape()));
  AttentionMasks masks;
  masks.key_padding_mask = key_padding_mask;
  if (!masks.key_padding_mask && opt_.pad_id) {
    Tensor m(ids.shape());
    for (int64_t i = 0; i < ids.numel(); ++i) m[i] = static_cast<int64_t>(ids[i]) == *opt_.pad_id;
    masks.key_padding_mask = m;
  }
  const int64_t t = ids.size(1);
  masks.bias = position_score_bias(opt_.positions, rel_bias.get(), opt_.nhead, t, t);
  Var x = tok_emb->forward(ids);
  if (pos_emb) x = pos_emb->forward(x);
  if (opt_.positions == PositionKind::kSinusoidal)
    x = add(x, Var::constant(table_rows(pe_, 0, t, "EncoderOnlyTransformer (max_len)")));
  x = drop->forward(emb_norm->forward(x));
  for (auto& layer : *layers) x = layer->forward(x, masks);
  return x;
}

Var EncoderOnlyTransformer::forward(const Tensor& ids,
                                    const std::optional<Tensor>& key_padding_mask) {
  return mlm_head->forward(encode(ids, key_padding_mask), tok_emb->weight);
}

}  // namespace attn::nn
