// nn-variants' gradcheck rows without a parity twin: the recurrent (fast-weight) form of linear
// attention through a whole layer, positions (learned table, sinusoidal module, RoPE inside
// attention scores, ALiBi as an sdpa bias) and the llama block decoding with a KV cache.
#include <memory>

#include "nn/attention/linear_attention.h"
#include "nn/attention/sdpa.h"
#include "nn/positional/alibi.h"
#include "nn/positional/learned.h"
#include "nn/positional/rope.h"
#include "nn/positional/sinusoidal.h"
#include "nn/registry/layer_cases.h"
#include "nn/transformer/llama_block.h"

namespace attn::nn {

std::vector<LayerCase> variant_layer_cases() {
  std::vector<LayerCase> rows;

  rows.push_back({"linear_attention/recurrent", [](Generator& gen) {
                    auto m = std::make_shared<LinearAttention>(4, 2, gen, /*causal=*/true);
                    perturb_parameters(*m, gen);
                    Var x(Tensor::randn({2, 4, 4}, gen), true);
                    return LayerInstance{m, module_leaves(*m, {x}),
                                         [m, x] { return m->forward_recurrent(x); }};
                  }});

  rows.push_back({"positions/learned_and_sinusoidal", [](Generator& gen) {
                    auto learned = std::make_shared<LearnedPositionalEmbedding>(6, 4, gen);
                    auto fixed = std::make_shared<SinusoidalPositionalEncoding>(6, 4);
                    Var x(Tensor::randn({2, 3, 4}, gen), true);
                    // tanh so the output is not linear in the table (a real Jacobian to check).
                    return LayerInstance{learned, module_leaves(*learned, {x}),
                                         [learned, fixed, x] {
                                           return tanh(fixed->forward(learned->forward(x, 2), 1));
                                         }};
                  }});

  // Scores of RoPE-rotated queries and keys, and attention with an ALiBi bias, from q, k, v.
  rows.push_back({"positions/rope_scores_alibi_sdpa", [](Generator& gen) {
                    Var q(Tensor::randn({1, 2, 4, 4}, gen), true);
                    Var k(Tensor::randn({1, 2, 4, 4}, gen), true);
                    Var v(Tensor::randn({1, 2, 4, 4}, gen), true);
                    return LayerInstance{nullptr, {q, k, v}, [q, k, v] {
                                           const Var rq = apply_rope(q, 1, RopeStyle::kInterleaved);
                                           const Var rk = apply_rope(k, 1, RopeStyle::kInterleaved);
                                           SdpaOptions o;
                                           o.masks.causal = true;
                                           o.masks.bias = Var::constant(alibi_bias(2, 4, 4));
                                           return scaled_dot_product_attention(rq, rk, v, o).out;
                                         }};
                  }});

  // Prompt of 3 then one cached step: the gradient reaches the prompt through the cache.
  rows.push_back({"llama_block/kv_cache_step", [](Generator& gen) {
                    LlamaConfig cfg;
                    cfg.dim = 4, cfg.n_heads = 2, cfg.n_kv_heads = 1, cfg.hidden_dim = 6;
                    auto m = std::make_shared<LlamaBlock>(cfg, gen);
                    perturb_parameters(*m, gen);
                    Var x(Tensor::randn({1, 4, 4}, gen), true);
                    return LayerInstance{m, module_leaves(*m, {x}), [m, x] {
                                           KVCache cache;
                                           m->forward(slice(x, 1, 0, 3), &cache);
                                           return m->forward(slice(x, 1, 3, 4), &cache);
                                         }};
                  }});
  return rows;
}

}  // namespace attn::nn
