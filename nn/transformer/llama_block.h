// A llama-style decoder block: pre-norm residuals with RMSNorm, rotary positions, grouped-query
// attention (n_kv_heads), a SwiGLU feed-forward, no biases anywhere, always causal.
//
//   attn::nn::LlamaConfig cfg;  cfg.dim = 64;  cfg.n_heads = 8;  cfg.n_kv_heads = 2;
//   attn::nn::LlamaBlock block(cfg, gen);
//   attn::Var y = block.forward(x);                    // x (B,T,64) -> (B,T,64)
//   attn::nn::KVCache cache;                           // incremental decoding:
//   block.forward(prompt, &cache);                     // fills the cache
//   block.forward(next_token_state, &cache);           // (B,1,64), position = cache length
//
//   h   = x + attention(attention_norm(x))
//   out = h + feed_forward(ffn_norm(h))
//   attention: q = rope(wq x), k = rope(wk x), v = wv x split into heads (n_kv_heads for k, v;
//              query head h reads kv head h / (n_heads / n_kv_heads)), causal softmax, wo.
//   feed_forward: w2(silu(w1 x) * w3 x).
//
// Parameter names follow Meta's llama reference code (docs/checkpoint-format.md):
//   attention.wq.weight (H*Dh, dim)      attention.wk.weight (Hkv*Dh, dim)
//   attention.wv.weight (Hkv*Dh, dim)    attention.wo.weight (dim, H*Dh)
//   feed_forward.w1.weight (hidden, dim) feed_forward.w2.weight (dim, hidden)
//   feed_forward.w3.weight (hidden, dim) attention_norm.weight (dim)  ffn_norm.weight (dim)
// RoPE style: Meta's checkpoints rotate interleaved pairs (the default here); Hugging Face's
// conversions permute wq/wk rows and use rotate-half — set rope_style to load those.
#pragma once

#include <cstdint>
#include <memory>

#include "autograd/generator.h"
#include "nn/attention/multihead_attention.h"
#include "nn/feedforward.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/norms.h"
#include "nn/positional/rope.h"

namespace attn::nn {

struct LlamaConfig {
  int64_t dim = 512;
  int64_t n_heads = 8;
  int64_t n_kv_heads = 0;  // 0: = n_heads
  int64_t hidden_dim = 0;  // 0: llama's rule, llama_hidden_dim(dim, multiple_of)
  int64_t multiple_of = 256;
  double norm_eps = 1e-5;
  double rope_theta = 10000.0;
  RopeStyle rope_style = RopeStyle::kInterleaved;
  // "sdpa" (materialises the weights, which it can return for plots) or "blockwise" (the
  // memory-efficient kernel, attn::blockwise_attention). Same values up to rounding.
  bool blockwise = false;
  int64_t block_size = 64;
};

// llama's feed-forward width: 2/3 of 4*dim (a gated layer has three matrices), rounded up to a
// multiple of multiple_of.
int64_t llama_hidden_dim(int64_t dim, int64_t multiple_of);

class LlamaAttention : public Module {
 public:
  LlamaAttention(const LlamaConfig& cfg, Generator& gen);

  // x (B,T,dim) -> (B,T,dim), positions start at the cache length (0 without a cache).
  Var forward(const Var& x, KVCache* cache = nullptr);
  // The attention weights of the last sdpa forward (B,H,Tq,Tk); empty with the blockwise kernel.
  const Tensor& last_weights() const { return last_weights_; }

  std::shared_ptr<Linear> wq, wk, wv, wo;

 private:
  LlamaConfig cfg_;
  int64_t head_dim_;
  Tensor last_weights_;
};

class LlamaBlock : public Module {
 public:
  LlamaBlock(const LlamaConfig& cfg, Generator& gen);

  Var forward(const Var& x, KVCache* cache = nullptr);  // x (B,T,dim) -> (B,T,dim)

  const LlamaConfig& config() const { return cfg_; }

  std::shared_ptr<LlamaAttention> attention;
  std::shared_ptr<FeedForward> feed_forward;  // SwiGLU: w1, w2, w3
  std::shared_ptr<RMSNorm> attention_norm, ffn_norm;

 private:
  LlamaConfig cfg_;
};

}  // namespace attn::nn
