// The two attention mechanisms of the recurrent encoder-decoder era, as the decoder uses them.
//
//   attn::nn::BahdanauAttention add(/*query_dim=*/16, /*memory_dim=*/16, /*attn_dim=*/16, gen);
//   attn::Var keys = add.project_memory(memory);                 // memory (B,S,16), once
//   attn::nn::AttentionStep a = add.forward(query, keys, memory, pad_mask);
//   a.context;   // (B,T,16) = sum_j a.weights[b,t,j] memory[b,j,:]
//   a.weights;   // (B,T,S), each row sums to 1, 0 at padded source positions
//
//   attn::nn::LuongAttention mul(attn::nn::LuongScore::kGeneral, 16, gen);
//   attn::nn::AttentionStep b = mul.forward(query, memory, pad_mask);
//
// Additive (Bahdanau et al. 2015): score(s, h_j) = v^T tanh(W_q s + W_k h_j), a small MLP per
// pair; the decoder asks with its PREVIOUS state s_{t-1}, before it reads token t.
// Multiplicative (Luong et al. 2015): score(s, h_j) = s . h_j (dot) or s^T W_a h_j (general);
// the decoder asks with its CURRENT state s_t, after it reads token t. Both normalise the
// scores over source positions with a softmax and return the weighted sum of the memory.
// pad_mask (B,S) marks padded source positions with 1: they get weight 0.
#pragma once

#include <cstdint>
#include <optional>

#include "autograd/generator.h"
#include "nn/linear.h"
#include "nn/module.h"

namespace attn::nn {

struct AttentionStep {
  Var context;  // (B,T,memory_dim)
  Var weights;  // (B,T,S)
};

class BahdanauAttention : public Module {
 public:
  BahdanauAttention(int64_t query_dim, int64_t memory_dim, int64_t attn_dim, Generator& gen);

  // memory (B,S,memory_dim) -> W_k h_j (B,S,attn_dim): independent of the query, so computed
  // once per source sentence instead of once per decoder step.
  Var project_memory(const Var& memory) const;
  // query (B,T,query_dim), keys from project_memory, memory (B,S,memory_dim).
  AttentionStep forward(const Var& query,
                        const Var& keys,
                        const Var& memory,
                        const std::optional<Tensor>& pad_mask) const;

  std::shared_ptr<Linear> query_proj;  // W_q (attn_dim, query_dim), no bias
  std::shared_ptr<Linear> key_proj;    // W_k (attn_dim, memory_dim), with bias
  std::shared_ptr<Linear> score_proj;  // v (1, attn_dim), no bias
};

enum class LuongScore { kDot, kGeneral };

class LuongAttention : public Module {
 public:
  LuongAttention(LuongScore score, int64_t dim, Generator& gen);

  // query (B,T,dim), memory (B,S,dim).
  AttentionStep forward(const Var& query,
                        const Var& memory,
                        const std::optional<Tensor>& pad_mask) const;

  LuongScore score() const { return score_; }
  std::shared_ptr<Linear> key_proj;  // W_a (dim, dim), no bias; general score only

 private:
  LuongScore score_;
};

// scores (B,T,S) -> weights (B,T,S) with padded positions (pad_mask (B,S) = 1) excluded, and
// context = weights @ memory (B,T,D). Shared by both mechanisms.
AttentionStep attend(const Var& scores, const Var& memory, const std::optional<Tensor>& pad_mask);

}  // namespace attn::nn
