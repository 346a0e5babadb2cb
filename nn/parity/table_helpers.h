// Small helpers shared by the layer-table files (nn/parity/*_layers.cpp).
//
//   TensorMap in{{"x", Tensor::randn({2, 3, 8}, gen)}, {"ids", random_ids({2, 3}, 10, gen)}};
//   in["src_key_padding_mask"] = padding_mask({3, 2}, 4);   // batch 0 keeps 3 of 4 keys
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "nn/attention/multihead_attention.h"
#include "nn/parity/parity_layers.h"
#include "nn/transformer/layer_options.h"

namespace attn::nn {

// Whole numbers drawn uniformly from [0, n), as a float tensor of the given shape.
Tensor random_ids(const Shape& shape, int64_t n, Generator& gen);
// (B, T) key padding mask, 1 = padding: row b keeps its first lengths[b] positions.
Tensor padding_mask(const std::vector<int64_t>& lengths, int64_t t);
// (T, T) causal mask, 1 = not allowed (j > i): PyTorch's boolean attn_mask convention.
Tensor causal_mask(int64_t t);

// The layer keys shared by the transformer rows (d_model, nhead, dim_feedforward, dropout,
// activation, layer_norm_eps, norm_first, bias, n_kv_heads), with PyTorch's names.
TransformerLayerOptions read_layer_options(LayerConfig& c);

// A row's layer whose forward is m->forward(x) on the input "x" (the attention variants).
template <class M>
ParityLayer layer_of(std::shared_ptr<M> m) {
  ParityLayer layer;
  layer.module = m;
  layer.forward = [m](LayerInputs& in) { return m->forward(in.input("x")); };
  return layer;
}

// The mha row's layer and inputs, shared by every row built on MultiheadAttention
// (attention_layers.cpp): inputs x, optional memory (key = value = memory), key_padding_mask,
// attn_mask; causal adds a causal mask; extra output attn_weights. The inputs' config keys:
// embed_dim, cross (a padded memory), attn_mask (one hidden key).
ParityLayer mha_parity_layer(std::shared_ptr<MultiheadAttention> m, bool causal);
TensorMap mha_parity_inputs(LayerConfig& c, Generator& gen);

// The families of the nn-core table (core_parity_layers() concatenates them).
std::vector<ParityLayerSpec> basic_parity_layers();        // basic_layers.cpp
std::vector<ParityLayerSpec> attention_parity_layers();    // attention_layers.cpp
std::vector<ParityLayerSpec> transformer_parity_layers();  // transformer_layers.cpp

}  // namespace attn::nn
