#include "nn/rnn/seq2seq_attention.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/attention/sdpa.h"

namespace attn::nn {

namespace {

void check_memory(const char* who, const Var& query, const Var& memory) {
  if (query.rank() != 3 || memory.rank() != 3 || query.size(0) != memory.size(0))
    throw Error(fmt::format("{}: expected query (B,T,Dq) and memory (B,S,Dm), got {} and {}", who,
                            shape_str(query.shape()), shape_str(memory.shape())));
}

}  // namespace

AttentionStep attend(const Var& scores, const Var& memory, const std::optional<Tensor>& pad_mask) {
  AttentionStep out;
  if (pad_mask) {
    const int64_t b = scores.size(0), src = scores.size(2);
    if (pad_mask->shape() != Shape{b, src})
      throw Error(fmt::format("attention: pad_mask must be (B,S) = ({}, {}), got {}", b, src,
                              shape_str(pad_mask->shape())));
    out.weights = masked_weights(scores, pad_mask->reshape({b, 1, src}));  // padding gets 0
  } else {
    out.weights = softmax(scores);  // over source positions
  }
  out.context = matmul(out.weights, memory);  // (B,T,S) (B,S,D) -> (B,T,D)
  return out;
}

BahdanauAttention::BahdanauAttention(int64_t query_dim,
                                     int64_t memory_dim,
                                     int64_t attn_dim,
                                     Generator& gen)
    : Module("BahdanauAttention") {
  query_proj =
      register_module("query_proj", std::make_shared<Linear>(query_dim, attn_dim, false, gen));
  key_proj = register_module("key_proj", std::make_shared<Linear>(memory_dim, attn_dim, true, gen));
  score_proj = register_module("score_proj", std::make_shared<Linear>(attn_dim, 1, false, gen));
}

Var BahdanauAttention::project_memory(const Var& memory) const {
  return key_proj->forward(memory);
}

// e[b,t,j] = v^T tanh(W_q query[b,t] + keys[b,j]): the sum is formed for every (t, j) pair by
// broadcasting (B,T,1,A) against (B,1,S,A); then one GEMM with v gives every score.
AttentionStep BahdanauAttention::forward(const Var& query,
                                         const Var& keys,
                                         const Var& memory,
                                         const std::optional<Tensor>& pad_mask) const {
  check_memory("BahdanauAttention", query, memory);
  const int64_t b = query.size(0), t = query.size(1), src = memory.size(1);
  const int64_t a = key_proj->out_features();
  if (keys.shape() != Shape{b, src, a})
    throw Error(fmt::format("BahdanauAttention: keys must be project_memory(memory) {}, got {}",
                            shape_str({b, src, a}), shape_str(keys.shape())));
  const Var q = reshape(query_proj->forward(query), {b, t, 1, a});
  const Var e = tanh(add(q, reshape(keys, {b, 1, src, a})));  // (B,T,S,A)
  return attend(reshape(score_proj->forward(e), {b, t, src}), memory, pad_mask);
}

LuongAttention::LuongAttention(LuongScore score, int64_t dim, Generator& gen)
    : Module("LuongAttention"), score_(score) {
  if (score == LuongScore::kGeneral)
    key_proj = register_module("key_proj", std::make_shared<Linear>(dim, dim, false, gen));
}

// dot: e[b,t,j] = query[b,t] . memory[b,j];  general: query[b,t] . (W_a memory[b,j]).
AttentionStep LuongAttention::forward(const Var& query,
                                      const Var& memory,
                                      const std::optional<Tensor>& pad_mask) const {
  check_memory("LuongAttention", query, memory);
  const Var keys = score_ == LuongScore::kGeneral ? key_proj->forward(memory) : memory;
  if (query.size(2) != keys.size(2))
    throw Error(fmt::format("LuongAttention: query {} and memory {} need the same feature size",
                            shape_str(query.shape()), shape_str(memory.shape())));
  return attend(matmul(query, keys, false, true), memory, pad_mask);
}

}  // namespace attn::nn
