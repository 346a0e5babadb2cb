#include "nn/transformer/transformer.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "nn/init.h"

namespace attn::nn {

namespace {

std::shared_ptr<LayerNorm> final_layer_norm(const TransformerLayerOptions& o) {
  return std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps, true, o.bias);
}

void check_caches(size_t have, size_t layers, const char* who) {
  if (have != layers)
    throw Error(fmt::format("{}: got {} caches for {} layers (one per layer)", who, have, layers));
}

}  // namespace

void xavier_init_matrices(const Module& module, Generator& gen) {
  for (Var& p : module.parameters())
    if (p.rank() >= 2) init::xavier_uniform_(p.value(), gen);
}

TransformerEncoder::TransformerEncoder(const TransformerLayerOptions& layer,
                                       int64_t num_layers,
                                       bool final_norm,
                                       Generator& gen,
                                       std::shared_ptr<Generator> dropout_gen)
    : Module("TransformerEncoder"), dropout_gen_(model_dropout_generator(dropout_gen, gen)) {
  layers = register_module("layers", std::make_shared<ModuleList<TransformerEncoderLayer>>());
  for (int64_t i = 0; i < num_layers; ++i)
    layers->append(std::make_shared<TransformerEncoderLayer>(layer, gen, dropout_gen_));
  if (final_norm) norm = register_module("norm", final_layer_norm(layer));
}

Var TransformerEncoder::forward(const Var& src,
                                const AttentionMasks& masks,
                                std::vector<KVCache>* caches) {
  if (caches) check_caches(caches->size(), layers->size(), "TransformerEncoder");
  Var x = src;
  for (size_t i = 0; i < layers->size(); ++i)
    x = (*layers)[i].forward(x, masks, caches ? &(*caches)[i] : nullptr);
  return norm ? norm->forward(x) : x;
}

TransformerDecoder::TransformerDecoder(const TransformerLayerOptions& layer,
                                       int64_t num_layers,
                                       bool final_norm,
                                       Generator& gen,
                                       std::shared_ptr<Generator> dropout_gen)
    : Module("TransformerDecoder"), dropout_gen_(model_dropout_generator(dropout_gen, gen)) {
  layers = register_module("layers", std::make_shared<ModuleList<TransformerDecoderLayer>>());
  for (int64_t i = 0; i < num_layers; ++i)
    layers->append(std::make_shared<TransformerDecoderLayer>(layer, gen, dropout_gen_));
  if (final_norm) norm = register_module("norm", final_layer_norm(layer));
}

Var TransformerDecoder::forward(const Var& tgt,
                                const Var& memory,
                                const AttentionMasks& self_masks,
                                const AttentionMasks& memory_masks,
                                std::vector<DecoderLayerCache>* caches) {
  if (caches) check_caches(caches->size(), layers->size(), "TransformerDecoder");
  Var x = tgt;
  for (size_t i = 0; i < layers->size(); ++i)
    x = (*layers)[i].forward(x, memory, self_masks, memory_masks, caches ? &(*caches)[i] : nullptr);
  return norm ? norm->forward(x) : x;
}

Transformer::Transformer(const TransformerOptions& o,
                         Generator& gen,
                         std::shared_ptr<Generator> dropout_gen)
    : Module("Transformer"), opt_(o), dropout_gen_(model_dropout_generator(dropout_gen, gen)) {
  encoder =
      register_module("encoder", std::make_shared<TransformerEncoder>(
                                     o, o.num_encoder_layers, o.layer_norm, gen, dropout_gen_));
  decoder =
      register_module("decoder", std::make_shared<TransformerDecoder>(
                                     o, o.num_decoder_layers, o.layer_norm, gen, dropout_gen_));
  xavier_init_matrices(*this, gen);
}

Var Transformer::forward(const Var& src,
                         const Var& tgt,
                         const AttentionMasks& src_masks,
                         const AttentionMasks& tgt_masks,
                         const AttentionMasks& memory_masks) {
  const Var memory = encoder->forward(src, src_masks);
  return decoder->forward(tgt, memory, tgt_masks, memory_masks);
}

}  // namespace attn::nn
