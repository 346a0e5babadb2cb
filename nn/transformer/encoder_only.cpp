#include "nn/transformer/encoder_only.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/init.h"

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
  pos_emb = register_module("pos_emb", std::make_shared<LearnedPositionalEmbedding>(
                                           o.max_len, o.d_model, gen, o.init_std));
  emb_norm = register_module("emb_norm", std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps));
  drop = register_module("drop", std::make_shared<Dropout>(o.dropout, dropout_gen_));
  layers = register_module("layers", std::make_shared<ModuleList<TransformerEncoderLayer>>());
  for (int64_t i = 0; i < o.num_layers; ++i)
    layers->append(std::make_shared<TransformerEncoderLayer>(o, gen, dropout_gen_));
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
  Var x = drop->forward(emb_norm->forward(pos_emb->forward(tok_emb->forward(ids))));
  for (auto& layer : *layers) x = layer->forward(x, masks);
  return x;
}

Var EncoderOnlyTransformer::forward(const Tensor& ids,
                                    const std::optional<Tensor>& key_padding_mask) {
  return mlm_head->forward(encode(ids, key_padding_mask), tok_emb->weight);
}

}  // namespace attn::nn
