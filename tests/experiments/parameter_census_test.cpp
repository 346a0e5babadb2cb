// The parameter census behind parameter-share: names land in the right component, PyTorch's
// packed in_proj is split into thirds, and constructed layers agree with the closed forms.
#include <doctest/doctest.h>

#include "experiments/common/parameter_census.h"
#include "nn/attention/multihead_attention.h"
#include "nn/transformer/decoder_layer.h"
#include "nn/transformer/encoder_layer.h"
#include "nn/transformer/llama_block.h"

namespace attn::experiments {

TEST_SUITE("experiments") {
  TEST_CASE("classify_parameter: projections, FFN, norms, embeddings, heads, the rest") {
    CHECK(classify_parameter("layers.0.self_attn.q_proj.weight") == Component::kQ);
    CHECK(classify_parameter("attention.wk.weight") == Component::kK);
    CHECK(classify_parameter("self_attn.v_proj.bias") == Component::kV);
    CHECK(classify_parameter("multihead_attn.out_proj.weight") == Component::kO);
    CHECK(classify_parameter("feed_forward.w3.weight") == Component::kFFN);
    CHECK(classify_parameter("layers.1.linear2.bias") == Component::kFFN);
    CHECK(classify_parameter("attention_norm.weight") == Component::kNorms);
    CHECK(classify_parameter("transformer.encoder.norm.bias") == Component::kNorms);
    CHECK(classify_parameter("emb_norm.weight") == Component::kNorms);
    CHECK(classify_parameter("tok_emb.weight") == Component::kEmbeddings);
    CHECK(classify_parameter("src_embedding.weight") == Component::kEmbeddings);
    CHECK(classify_parameter("mlm_head.norm.weight") == Component::kHead);
    CHECK(classify_parameter("lm_head.weight") == Component::kHead);
    CHECK(classify_parameter("mystery") == Component::kOther);
  }

  TEST_CASE("count_by_component splits in_proj and matches the closed forms") {
    Generator gen(0);
    nn::TransformerLayerOptions o;
    o.d_model = 16;
    o.nhead = 2;
    o.dim_feedforward = 24;
    o.dropout = 0;
    nn::TransformerEncoderLayer enc(o, gen);
    const ComponentCounts e = count_by_component(enc);
    CHECK(e[Component::kQ] == 16 * 16 + 16);
    CHECK(e[Component::kK] == e[Component::kQ]);
    CHECK(e.total() == enc.num_parameters());
    CHECK(e == encoder_layer_formula({16, 24, true}));
    nn::TransformerDecoderLayer dec(o, gen);
    CHECK(count_by_component(dec) == decoder_layer_formula({16, 24, true}));

    o.bias = false;  // the formula's bias switch follows the layer's
    nn::TransformerEncoderLayer nobias(o, gen);
    CHECK(count_by_component(nobias) == encoder_layer_formula({16, 24, false}));

    nn::LlamaConfig lc;
    lc.dim = 16;
    lc.n_heads = 4;
    lc.n_kv_heads = 1;
    lc.hidden_dim = 40;
    nn::LlamaBlock block(lc, gen);
    const ComponentCounts l = count_by_component(block);
    CHECK(l[Component::kK] == 4 * 16);  // one kv head of width 4
    CHECK(l == llama_block_formula({16, 4, 1, 40}));
    CHECK(l[Component::kOther] == 0);

    nn::MultiheadAttentionOptions gqa;
    gqa.n_kv_heads = 1;  // separate q_proj/k_proj/v_proj names
    nn::MultiheadAttention mha(16, 4, gen, gqa);
    const ComponentCounts m = count_by_component(mha);
    CHECK(m[Component::kQ] == 16 * 16 + 16);
    CHECK(m[Component::kV] == 4 * 16 + 4);
    CHECK(m.total() == mha.num_parameters());
  }
}

}  // namespace attn::experiments
