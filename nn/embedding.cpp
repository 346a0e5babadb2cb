#include "nn/embedding.h"

#include <fmt/format.h>

#include <algorithm>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

Embedding::Embedding(int64_t num_embeddings,
                     int64_t embedding_dim,
                     Generator& gen,
                     std::optional<int64_t> padding_idx)
    : Module("Embedding"), num_(num_embeddings), dim_(embedding_dim) {
  if (num_embeddings <= 0 || embedding_dim <= 0)
    throw Error(fmt::format("Embedding: sizes must be positive, got ({}, {})", num_embeddings,
                            embedding_dim));
  if (padding_idx) {
    // PyTorch accepts a negative padding_idx counting from the end.
    int64_t p = *padding_idx < 0 ? *padding_idx + num_embeddings : *padding_idx;
    if (p < 0 || p >= num_embeddings)
      throw Error(fmt::format("Embedding: padding_idx {} outside [-{}, {})", *padding_idx,
                              num_embeddings, num_embeddings));
    padding_idx_ = p;
  }
  weight = register_parameter("weight", Tensor::randn({num_embeddings, embedding_dim}, gen));
  zero_padding_row();
}

void Embedding::zero_padding_row() {
  if (padding_idx_) std::fill_n(weight.value().data() + *padding_idx_ * dim_, dim_, real(0));
}

Var Embedding::forward(const Tensor& ids) const {
  Var y = embedding(weight, ids);  // (..., dim); backward scatter-adds into the used rows
  if (!padding_idx_) return y;
  // Rows looked up at padding positions are swapped for a constant copy of the padding row:
  // the forward value is unchanged and the where() sends those rows no gradient.
  Shape mask_shape = ids.shape();
  mask_shape.push_back(1);
  Tensor is_pad(mask_shape);
  bool any = false;
  for (int64_t i = 0; i < ids.numel(); ++i)
    if (static_cast<int64_t>(ids[i]) == *padding_idx_) is_pad[i] = 1, any = true;
  if (!any) return y;
  Tensor pad_row = Tensor::empty({dim_});
  std::copy_n(weight.value().data() + *padding_idx_ * dim_, dim_, pad_row.data());
  return where(is_pad, Var::constant(pad_row), y);
}

}  // namespace attn::nn
