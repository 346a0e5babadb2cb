// Gradcheck rows for the positional schemes inside whole models: each of the three transformer
// models with every scheme the older rows do not cover (core_layer_cases has seq2seq with
// sinusoidal, decoder-only with learned and rope, encoder-only with learned). The T5 and ALiBi
// rows of the decoder-only model decode one step with a KV cache, so the bias of a query that
// is not the first row (queries = the last Tq of Tk positions) is checked too.
#include <memory>

#include "autograd/functional.h"
#include "nn/registry/layer_cases.h"
#include "nn/transformer/decoder_only.h"
#include "nn/transformer/encoder_only.h"
#include "nn/transformer/seq2seq.h"

namespace attn::nn {

namespace {

// Columns [lo, hi) of a (B,T) id tensor.
Tensor id_columns(const Tensor& ids, int64_t lo, int64_t hi) {
  const int64_t b = ids.size(0), t = ids.size(1);
  Tensor out({b, hi - lo});
  for (int64_t r = 0; r < b; ++r)
    for (int64_t j = lo; j < hi; ++j) out[r * (hi - lo) + j - lo] = ids[r * t + j];
  return out;
}

}  // namespace

std::vector<LayerCase> position_layer_cases() {
  std::vector<LayerCase> rows;
  const Tensor src = Tensor::from_vector({2, 4}, {3, 1, 4, 2, 5, 2, 0, 0});  // 0 = padding
  const Tensor tgt = Tensor::from_vector({2, 3}, {1, 3, 5, 2, 4, 1});
  const Tensor ids = Tensor::from_vector({2, 4}, {3, 1, 4, 2, 5, 2, 3, 3});
  // The padding id's row gets no gradient by design, so the encoder rows mask keys explicitly
  // instead of looking up id 0 (whose output would depend on that row).
  const Tensor pad = Tensor::from_vector({2, 4}, {0, 0, 0, 0, 0, 0, 1, 1});

  for (PositionKind k : {PositionKind::kNone, PositionKind::kLearned, PositionKind::kRope,
                         PositionKind::kAlibi, PositionKind::kT5Bias}) {
    Seq2SeqOptions s;  // the sizes of core_layer_cases' seq2seq row, untied
    s.src_vocab = s.tgt_vocab = 6, s.pad_id = 0, s.positions = k;
    s.d_model = 4, s.nhead = 2, s.dim_feedforward = 8, s.max_len = 8;
    s.num_encoder_layers = s.num_decoder_layers = 1;
    rows.push_back(model_case<Seq2SeqTransformer>(
        "seq2seq/" + position_kind_name(k), s,
        [src, tgt](Seq2SeqTransformer& m) { return m.forward(src, tgt); }));
  }

  for (PositionKind k : {PositionKind::kSinusoidal, PositionKind::kAlibi, PositionKind::kT5Bias}) {
    DecoderOnlyOptions d;
    d.vocab_size = 6, d.max_len = 8, d.d_model = 4, d.nhead = 2, d.num_layers = 2;
    d.dim_feedforward = 8;
    d.positions = k;
    // A prompt of 3 tokens, then one cached step: its logits depend on the prompt via the cache.
    rows.push_back(model_case<DecoderOnlyTransformer>(
        "decoder_only/" + position_kind_name(k) + "_kv_cache", d, [ids](DecoderOnlyTransformer& m) {
          std::vector<KVCache> caches = m.make_caches();
          const Var prompt = m.forward(id_columns(ids, 0, 3), &caches);
          return concat({prompt, m.forward(id_columns(ids, 3, 4), &caches)}, 1);
        }));
  }

  for (PositionKind k : {PositionKind::kNone, PositionKind::kSinusoidal, PositionKind::kRope,
                         PositionKind::kAlibi, PositionKind::kT5Bias}) {
    EncoderOnlyOptions e;
    e.vocab_size = 6, e.max_len = 8, e.d_model = 4, e.nhead = 2, e.num_layers = 1;
    e.dim_feedforward = 8, e.layer_norm_eps = 1e-5;
    e.pad_id = 0;
    e.positions = k;
    rows.push_back(model_case<EncoderOnlyTransformer>(
        "encoder_only/" + position_kind_name(k), e,
        [ids, pad](EncoderOnlyTransformer& m) { return m.forward(ids, pad); }));
  }
  return rows;
}

}  // namespace attn::nn
