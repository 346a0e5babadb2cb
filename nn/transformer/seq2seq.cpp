#include "nn/transformer/seq2seq.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/positional/sinusoidal.h"
#include "nn/transformer/sampling.h"

namespace attn::nn {

Seq2SeqTransformer::Seq2SeqTransformer(const Seq2SeqOptions& o,
                                       Generator& gen,
                                       std::shared_ptr<Generator> dropout_gen)
    : Module("Seq2SeqTransformer"),
      opt_(o),
      dropout_gen_(model_dropout_generator(std::move(dropout_gen), gen)) {
  if (o.src_vocab <= 0 || o.tgt_vocab <= 0)
    throw Error(
        fmt::format("Seq2SeqTransformer: src_vocab and tgt_vocab must be positive, got {} "
                    "and {}",
                    o.src_vocab, o.tgt_vocab));
  src_embedding = register_module(
      "src_embedding", std::make_shared<Embedding>(o.src_vocab, o.d_model, gen, o.pad_id));
  tgt_embedding = register_module(
      "tgt_embedding", std::make_shared<Embedding>(o.tgt_vocab, o.d_model, gen, o.pad_id));
  TransformerOptions stack = o;
  stack.rope.reset();
  if (o.positions == PositionKind::kRope) stack.rope = o.rope_style;  // self-attention only
  transformer =
      register_module("transformer", std::make_shared<Transformer>(stack, gen, dropout_gen_));
  if (!o.tie_output)
    lm_head =
        register_module("lm_head", std::make_shared<Linear>(o.d_model, o.tgt_vocab, true, gen));
  dropout = register_module("dropout", std::make_shared<Dropout>(o.dropout, dropout_gen_));
  xavier_init_matrices(*this, gen);
  src_embedding->zero_padding_row();  // the padding rows start at zero (and get no gradient)
  tgt_embedding->zero_padding_row();
  // Position modules after the xavier pass, so they keep their own initialisation.
  if (o.positions == PositionKind::kSinusoidal) pe_ = sinusoidal_table(o.max_len, o.d_model);
  if (o.positions == PositionKind::kLearned) {
    src_pos = register_module(
        "src_pos", std::make_shared<LearnedPositionalEmbedding>(o.max_len, o.d_model, gen));
    tgt_pos = register_module(
        "tgt_pos", std::make_shared<LearnedPositionalEmbedding>(o.max_len, o.d_model, gen));
  }
  if (o.positions == PositionKind::kT5Bias) {
    enc_rel_bias = register_module("enc_rel_bias", t5_model_bias(o.nhead, o.d_model, true, gen));
    dec_rel_bias = register_module("dec_rel_bias", t5_model_bias(o.nhead, o.d_model, false, gen));
  }
}

std::optional<Tensor> Seq2SeqTransformer::padding_of(const Tensor& ids) const {
  if (!opt_.pad_id) return std::nullopt;
  Tensor m(ids.shape());
  for (int64_t i = 0; i < ids.numel(); ++i) m[i] = static_cast<int64_t>(ids[i]) == *opt_.pad_id;
  return m;
}

Var Seq2SeqTransformer::embed(const Embedding& table,
                              const LearnedPositionalEmbedding* learned,
                              const Tensor& ids,
                              int64_t start_pos) const {
  if (ids.rank() != 2)
    throw Error("Seq2SeqTransformer: token ids must be (B,T), got " + shape_str(ids.shape()));
  Var x = mul_scalar(table.forward(ids), static_cast<real>(std::sqrt(double(opt_.d_model))));
  if (opt_.positions == PositionKind::kSinusoidal)
    x = add(x,
            Var::constant(table_rows(pe_, start_pos, ids.size(1), "Seq2SeqTransformer (max_len)")));
  if (learned) x = learned->forward(x, start_pos);
  return dropout->forward(x);
}

Var Seq2SeqTransformer::encode(const Tensor& src_ids) {
  AttentionMasks m;
  m.key_padding_mask = padding_of(src_ids);
  const int64_t s = src_ids.rank() == 2 ? src_ids.size(1) : 0;
  const Var x = embed(*src_embedding, src_pos.get(), src_ids, 0);
  m.bias = position_score_bias(opt_.positions, enc_rel_bias.get(), opt_.nhead, s, s);
  return transformer->encoder->forward(x, m);
}

Var Seq2SeqTransformer::decode(const Tensor& tgt_ids,
                               const Var& memory,
                               const Tensor& src_ids,
                               std::vector<DecoderLayerCache>* caches,
                               int64_t start_pos) {
  AttentionMasks self_masks, memory_masks;
  // Targets are right-padded, so the causal mask already keeps every real position from seeing
  // the padding after it; masking target padding too would only change the (ignored) outputs at
  // padded positions.
  self_masks.causal = true;
  memory_masks.key_padding_mask = padding_of(src_ids);
  const Var x = embed(*tgt_embedding, tgt_pos.get(), tgt_ids, start_pos);
  // The T new target positions attend over the cached keys too (a relative bias depends only
  // on the differences, so without caches the T positions alone decide it).
  const int64_t t = tgt_ids.size(1);
  const int64_t cached = caches && !caches->empty() ? (*caches)[0].self_attn.length() : 0;
  self_masks.bias =
      position_score_bias(opt_.positions, dec_rel_bias.get(), opt_.nhead, t, cached + t);
  const Var h = transformer->decoder->forward(x, memory, self_masks, memory_masks, caches);
  return lm_head ? lm_head->forward(h) : matmul(h, tgt_embedding->weight, false, true);
}

Var Seq2SeqTransformer::forward(const Tensor& src_ids, const Tensor& tgt_ids) {
  if (src_ids.rank() != 2 || tgt_ids.rank() != 2 || src_ids.size(0) != tgt_ids.size(0))
    throw Error(fmt::format("Seq2SeqTransformer: expected src (B,S) and tgt (B,T), got {} and {}",
                            shape_str(src_ids.shape()), shape_str(tgt_ids.shape())));
  return decode(tgt_ids, encode(src_ids), src_ids);
}

Tensor Seq2SeqTransformer::greedy_decode(
    const Tensor& src_ids, int64_t bos, int64_t eos, int64_t max_new_tokens, bool use_cache) {
  NoGrad off;
  const int64_t b = src_ids.size(0), v = opt_.tgt_vocab;
  const Var memory = encode(src_ids);
  std::vector<DecoderLayerCache> caches(transformer->decoder->layers->size());
  Tensor seq = Tensor::full({b, max_new_tokens + 1}, static_cast<real>(eos));  // BOS + new tokens
  for (int64_t r = 0; r < b; ++r) seq[r * (max_new_tokens + 1)] = static_cast<real>(bos);
  std::vector<bool> done(b, false);
  int64_t steps = 0;
  for (int64_t t = 0; t < max_new_tokens; ++t) {
    // With the caches only token t is new; without them the whole prefix 0..t is decoded again.
    Tensor in({b, use_cache ? 1 : t + 1});
    for (int64_t r = 0; r < b; ++r)
      for (int64_t j = 0; j < in.size(1); ++j)
        in[r * in.size(1) + j] = seq[r * (max_new_tokens + 1) + (use_cache ? t : j)];
    const Tensor logits = use_cache ? decode(in, memory, src_ids, &caches, t).value()
                                    : decode(in, memory, src_ids).value();
    const int64_t rows = logits.size(1);
    bool all_done = true;
    for (int64_t r = 0; r < b; ++r) {
      if (done[r]) continue;
      const int64_t next = argmax(logits.data() + (r * rows + rows - 1) * v, v);
      seq[r * (max_new_tokens + 1) + t + 1] = static_cast<real>(next);
      done[r] = next == eos;
      all_done = all_done && done[r];
    }
    steps = t + 1;
    if (all_done) break;
  }
  Tensor out({b, steps});
  for (int64_t r = 0; r < b; ++r)
    for (int64_t j = 0; j < steps; ++j) out[r * steps + j] = seq[r * (max_new_tokens + 1) + j + 1];
  return out;
}

}  // namespace attn::nn
