// nn-core's gradcheck rows that have no parity twin: dropout in training mode, attention with
// an additive bias and without scaling, multi-head attention with a head mask or a weights hook,
// and the three models (whose inputs are token ids, so their leaves are the parameters alone).
#include <functional>
#include <memory>

#include "autograd/functional.h"

#include "nn/attention/multihead_attention.h"
#include "nn/attention/sdpa.h"
#include "nn/dropout.h"
#include "nn/registry/layer_cases.h"
#include "nn/transformer/decoder_only.h"
#include "nn/transformer/encoder_only.h"
#include "nn/transformer/seq2seq.h"

namespace attn::nn {

namespace {

// Cross-attention (E 6, 3 heads, 3 queries over 4 keys) with a setting applied after building.
LayerCase cross_attention_case(const std::string& name,
                               std::function<void(MultiheadAttention&)> setup) {
  return {name, [setup](Generator& gen) {
            auto m = std::make_shared<MultiheadAttention>(6, 3, gen);
            perturb_parameters(*m, gen);
            setup(*m);
            Var x(Tensor::randn({2, 3, 6}, gen), true);
            Var mem(Tensor::randn({2, 4, 6}, gen), true);
            LayerInstance out;
            out.keep_alive = m;
            out.leaves = module_leaves(*m, {x, mem});
            out.forward = [m, x, mem] { return m->forward(x, mem, mem).out; };
            return out;
          }};
}

}  // namespace

std::vector<LayerCase> core_layer_cases() {
  std::vector<LayerCase> rows;

  // Training-mode dropout is deterministic once its generator is rewound before every call,
  // which is exactly how a resumed run replays the masks of a checkpointed one.
  rows.push_back({"dropout/train", [](Generator& gen) {
                    auto rng = std::make_shared<Generator>(7);
                    const std::string start = rng->state();
                    auto m = std::make_shared<Dropout>(0.3, rng);
                    m->train();
                    Var x(Tensor::randn({2, 3, 4}, gen), true);
                    LayerInstance out;
                    out.keep_alive = m;
                    out.leaves = {x};
                    out.forward = [m, rng, start, x] {
                      rng->set_state(start);
                      return m->forward(x);
                    };
                    return out;
                  }});

  // sdpa with a learned additive bias (ALiBi-like, differentiable), no scaling, GQA, causal.
  rows.push_back({"sdpa/bias_unscaled_gqa_causal", [](Generator& gen) {
                    Var q(Tensor::randn({2, 4, 3, 2}, gen), true);
                    Var k(Tensor::randn({2, 2, 3, 2}, gen), true);
                    Var v(Tensor::randn({2, 2, 3, 2}, gen), true);
                    Var bias(Tensor::randn({1, 4, 3, 3}, gen), true);
                    LayerInstance out;
                    out.leaves = {q, k, v, bias};
                    out.forward = [q, k, v, bias] {
                      SdpaOptions o;
                      o.scale = false;
                      o.masks.causal = true;
                      o.masks.bias = bias;
                      return scaled_dot_product_attention(q, k, v, o).out;
                    };
                    return out;
                  }});

  // Multi-head attention with head 2 of 3 ablated and head 3 scaled: the head mask multiplies
  // each head's output before out_proj, so its gradient must be scaled the same way.
  rows.push_back(cross_attention_case("mha/head_mask", [](MultiheadAttention& m) {
    m.set_head_mask(Tensor::from_vector({1, 0, 0.5}));
  }));
  // Weights passed through a hook (w -> w * w, not normalised: any differentiable function
  // will do): the gradient must flow through the weights the hook returns.
  rows.push_back(cross_attention_case("mha/weights_hook", [](MultiheadAttention& m) {
    m.set_weights_hook([](const Var& w, const Var&) { return mul(w, w); });
  }));

  // Id 0 is padding. A padding row deliberately gets no gradient through its lookup, so padding
  // appears only where its lookups cannot reach the output: in the source (masked as keys).
  const Tensor src = Tensor::from_vector({2, 4}, {3, 1, 4, 2, 5, 2, 0, 0});
  const Tensor tgt = Tensor::from_vector({2, 3}, {1, 3, 5, 2, 4, 1});
  const Tensor src_pad = Tensor::from_vector({2, 4}, {0, 0, 0, 0, 0, 0, 1, 1});
  const Tensor src_ids = Tensor::from_vector({2, 4}, {3, 1, 4, 2, 5, 2, 3, 3});

  Seq2SeqOptions s;
  s.src_vocab = s.tgt_vocab = 6;
  s.d_model = 4, s.nhead = 2, s.dim_feedforward = 8, s.max_len = 8;
  s.num_encoder_layers = s.num_decoder_layers = 1;
  s.pad_id = 0;
  s.tie_output = true;
  rows.push_back(model_case<Seq2SeqTransformer>(
      "seq2seq/tied_padded", s, [src, tgt](Seq2SeqTransformer& m) { return m.forward(src, tgt); }));

  DecoderOnlyOptions d;
  d.vocab_size = 6, d.max_len = 8, d.d_model = 4, d.nhead = 2, d.num_layers = 2;
  d.dim_feedforward = 8;
  rows.push_back(model_case<DecoderOnlyTransformer>(
      "decoder_only/learned_tied", d, [tgt](DecoderOnlyTransformer& m) { return m.forward(tgt); }));
  d.positions = PositionKind::kRope, d.n_kv_heads = 1, d.tie_weights = false, d.num_layers = 1;
  rows.push_back(model_case<DecoderOnlyTransformer>(
      "decoder_only/rope_mqa", d, [tgt](DecoderOnlyTransformer& m) { return m.forward(tgt); }));

  EncoderOnlyOptions e;
  e.vocab_size = 6, e.max_len = 8, e.d_model = 4, e.nhead = 2, e.num_layers = 1;
  e.dim_feedforward = 8, e.layer_norm_eps = 1e-5;
  rows.push_back(model_case<EncoderOnlyTransformer>(
      "encoder_only/mlm_padded", e,
      [src_ids, src_pad](EncoderOnlyTransformer& m) { return m.forward(src_ids, src_pad); }));
  return rows;
}

}  // namespace attn::nn
