#include "nn/transformer/llama_block.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

int64_t llama_hidden_dim(int64_t dim, int64_t multiple_of) {
  const int64_t hidden = 2 * (4 * dim) / 3;
  return multiple_of * ((hidden + multiple_of - 1) / multiple_of);
}

namespace {
LlamaConfig resolved(LlamaConfig c) {
  if (c.n_kv_heads == 0) c.n_kv_heads = c.n_heads;
  if (c.hidden_dim == 0) c.hidden_dim = llama_hidden_dim(c.dim, c.multiple_of);
  if (c.dim <= 0 || c.n_heads <= 0 || c.dim % c.n_heads != 0 || (c.dim / c.n_heads) % 2 != 0)
    throw Error(
        fmt::format("LlamaBlock: dim ({}) must be a multiple of n_heads ({}) with an even "
                    "head size (RoPE rotates pairs)",
                    c.dim, c.n_heads));
  if (c.n_kv_heads <= 0 || c.n_heads % c.n_kv_heads != 0)
    throw Error(fmt::format("LlamaBlock: n_kv_heads ({}) must divide n_heads ({})", c.n_kv_heads,
                            c.n_heads));
  return c;
}
}  // namespace

LlamaAttention::LlamaAttention(const LlamaConfig& cfg, Generator& gen)
    : Module("LlamaAttention"), cfg_(resolved(cfg)), head_dim_(cfg_.dim / cfg_.n_heads) {
  const int64_t dim = cfg_.dim, q_out = cfg_.n_heads * head_dim_,
                kv_out = cfg_.n_kv_heads * head_dim_;
  wq = register_module("wq", std::make_shared<Linear>(dim, q_out, false, gen));
  wk = register_module("wk", std::make_shared<Linear>(dim, kv_out, false, gen));
  wv = register_module("wv", std::make_shared<Linear>(dim, kv_out, false, gen));
  wo = register_module("wo", std::make_shared<Linear>(q_out, dim, false, gen));
}

Var LlamaAttention::forward(const Var& x, KVCache* cache) {
  if (x.rank() != 3 || x.size(2) != cfg_.dim)
    throw Error(
        fmt::format("LlamaAttention: expected x (B,T,{}), got {}", cfg_.dim, shape_str(x.shape())));
  const int64_t start = cache ? cache->length() : 0;
  Var q = split_heads(wq->forward(x), cfg_.n_heads);     // (B,H,T,Dh)
  Var k = split_heads(wk->forward(x), cfg_.n_kv_heads);  // (B,Hkv,T,Dh)
  Var v = split_heads(wv->forward(x), cfg_.n_kv_heads);
  q = apply_rope(q, start, cfg_.rope_style, cfg_.rope_theta);
  k = apply_rope(k, start, cfg_.rope_style, cfg_.rope_theta);
  if (cache) {
    if (cache->filled) k = concat({cache->k, k}, 2), v = concat({cache->v, v}, 2);
    cache->k = k, cache->v = v, cache->filled = true;
  }
  Var y;
  if (cfg_.blockwise) {
    y = blockwise_attention(q, k, v, /*causal=*/true, cfg_.block_size);
    last_weights_ = Tensor();
  } else {
    SdpaOptions opt;
    opt.masks.causal = true;
    AttentionOutput a = scaled_dot_product_attention(q, k, v, opt);
    y = a.out;
    last_weights_ = a.weights.value();
  }
  return wo->forward(merge_heads(y));
}

LlamaBlock::LlamaBlock(const LlamaConfig& cfg, Generator& gen)
    : Module("LlamaBlock"), cfg_(resolved(cfg)) {
  attention = register_module("attention", std::make_shared<LlamaAttention>(cfg_, gen));
  feed_forward = register_module(
      "feed_forward",
      std::make_shared<FeedForward>(cfg_.dim, cfg_.hidden_dim, Activation::kSwiGLU, gen, false));
  attention_norm =
      register_module("attention_norm", std::make_shared<RMSNorm>(cfg_.dim, cfg_.norm_eps));
  ffn_norm = register_module("ffn_norm", std::make_shared<RMSNorm>(cfg_.dim, cfg_.norm_eps));
}

Var LlamaBlock::forward(const Var& x, KVCache* cache) {
  const Var h = add(x, attention->forward(attention_norm->forward(x), cache));
  return add(h, feed_forward->forward(ffn_norm->forward(h)));
}

}  // namespace attn::nn
