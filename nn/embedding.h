// Embedding: a lookup table of vectors indexed by token id, PyTorch's nn.Embedding.
//
//   attn::Generator gen(0);
//   attn::nn::Embedding emb(/*num_embeddings=*/100, /*embedding_dim=*/16, gen, /*padding_idx=*/0);
//   attn::Var h = emb.forward(ids);      // ids (B,T) of whole numbers in [0,100) -> (B,T,16)
//   emb.named_parameters();             // {"weight", (100,16)}
//
// Initialised N(0, 1) as PyTorch. With a padding_idx, that row starts at zero and never
// receives a gradient, so padding tokens keep contributing nothing while the model trains
// (its value is still looked up as stored, so a loaded non-zero row is returned as is).
#pragma once

#include <cstdint>
#include <optional>

#include "autograd/generator.h"
#include "nn/module.h"

namespace attn::nn {

class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings,
            int64_t embedding_dim,
            Generator& gen,
            std::optional<int64_t> padding_idx = std::nullopt);

  // ids (...) -> (..., embedding_dim). An id outside [0, num_embeddings) is an error.
  Var forward(const Tensor& ids) const;

  // Sets the padding row to zero (after a re-initialisation of the whole table); no-op without one.
  void zero_padding_row();

  int64_t num_embeddings() const { return num_; }
  int64_t embedding_dim() const { return dim_; }
  std::optional<int64_t> padding_idx() const { return padding_idx_; }

  Var weight;  // (num_embeddings, embedding_dim)

 private:
  int64_t num_, dim_;
  std::optional<int64_t> padding_idx_;
};

}  // namespace attn::nn
