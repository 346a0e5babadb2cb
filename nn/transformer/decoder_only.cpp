#include "nn/transformer/decoder_only.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/attention/sliding_window.h"
#include "nn/init.h"
#include "nn/positional/score_bias_registry.h"
#include "nn/positional/sinusoidal.h"

namespace attn::nn {

DecoderOnlyTransformer::DecoderOnlyTransformer(const DecoderOnlyOptions& o,
                                               Generator& gen,
                                               std::shared_ptr<Generator> dropout_gen)
    : Module("DecoderOnlyTransformer"),
      opt_(o),
      dropout_gen_(model_dropout_generator(std::move(dropout_gen), gen)) {
  if (o.attention_window < 0)
    throw Error(fmt::format("DecoderOnlyTransformer: attention_window must be >= 0, got {}",
                            o.attention_window));
  if (o.vocab_size <= 0 || o.max_len <= 0 || o.num_layers <= 0)
    throw Error(fmt::format(
        "DecoderOnlyTransformer: vocab_size, max_len and num_layers must be positive, got {}, {}, "
        "{}",
        o.vocab_size, o.max_len, o.num_layers));
  tok_emb = register_module("tok_emb", std::make_shared<Embedding>(o.vocab_size, o.d_model, gen));
  init::normal_(tok_emb->weight.value(), gen, 0.0, o.init_std);
  if (o.positions == PositionKind::kLearned)
    pos_emb = register_module("pos_emb", std::make_shared<LearnedPositionalEmbedding>(
                                             o.max_len, o.d_model, gen, o.init_std));
  if (o.positions == PositionKind::kSinusoidal) pe_ = sinusoidal_table(o.max_len, o.d_model);
  if (o.positions == PositionKind::kT5Bias)
    rel_bias = register_module("rel_bias", t5_model_bias(o.nhead, o.d_model, false, gen));
  if (!o.score_bias.empty()) {
    const ScoreBiasRow* row = score_bias_registry().find(o.score_bias);
    if (!row)
      throw UsageError(fmt::format(
          "DecoderOnlyTransformer: score_bias '{}' is not a registered score bias (load its "
          "plugin with --plugin FILE.so)",
          o.score_bias));
    extra_bias_ = [row = *row, nhead = o.nhead, causal = o.causal](int64_t tq, int64_t tk) {
      return score_bias_table(row, nhead, tq, tk, causal);
    };
  }
  drop = register_module("drop", std::make_shared<Dropout>(o.dropout, dropout_gen_));
  TransformerLayerOptions lo = o;
  lo.rope.reset();
  if (o.positions == PositionKind::kRope) lo.rope = o.rope_style;
  layers = register_module("layers", std::make_shared<ModuleList<TransformerEncoderLayer>>());
  for (int64_t i = 0; i < o.num_layers; ++i)
    layers->append(std::make_shared<TransformerEncoderLayer>(lo, gen, dropout_gen_));
  if (o.layer_norm)  // the final norm goes with the layers' norms (layer_norm = false)
    norm = register_module("norm",
                           std::make_shared<LayerNorm>(o.d_model, o.layer_norm_eps, true, o.bias));
  if (!o.tie_weights)
    lm_head =
        register_module("lm_head", std::make_shared<Linear>(o.d_model, o.vocab_size, false, gen));
}

Var DecoderOnlyTransformer::forward(const Tensor& ids, std::vector<KVCache>* caches) {
  if (ids.rank() != 2)
    throw Error("DecoderOnlyTransformer: ids must be (B,T), got " + shape_str(ids.shape()));
  if (caches && caches->size() != layers->size())
    throw Error(fmt::format("DecoderOnlyTransformer: {} caches for {} layers", caches->size(),
                            layers->size()));
  const int64_t start = caches ? (*caches)[0].length() : 0;
  Var x = tok_emb->forward(ids);  // (B,T,d)
  if (pos_emb) x = pos_emb->forward(x, start);
  if (opt_.positions == PositionKind::kSinusoidal)
    x = add(x,
            Var::constant(table_rows(pe_, start, ids.size(1), "DecoderOnlyTransformer (max_len)")));
  x = drop->forward(x);
  if (!opt_.causal && (caches || opt_.attention_window > 0))
    throw Error(
        "DecoderOnlyTransformer: causal = false takes neither a KV cache nor an "
        "attention_window (every position sees the whole input; generate with use_cache = false)");
  AttentionMasks causal;
  causal.causal = opt_.causal;
  if (opt_.attention_window > 0)
    causal.attn_mask = causal_window_mask(ids.size(1), start + ids.size(1), opt_.attention_window);
  // ALiBi / T5: one score bias for every block, for the T new queries over all start + T keys.
  causal.bias = position_score_bias(opt_.positions, rel_bias.get(), opt_.nhead, ids.size(1),
                                    start + ids.size(1));
  if (extra_bias_) {  // a registered scheme's fixed bias, alone or on top of the scheme's own
    const Var extra = Var::constant(extra_bias_(ids.size(1), start + ids.size(1)));
    causal.bias = causal.bias ? add(*causal.bias, extra) : extra;
  }
  for (size_t i = 0; i < layers->size(); ++i)
    x = (*layers)[i].forward(x, causal, caches ? &(*caches)[i] : nullptr);
  if (norm) x = norm->forward(x);
  return lm_head ? lm_head->forward(x) : matmul(x, tok_emb->weight, false, true);
}

std::vector<int64_t> pick_last(const Tensor& logits, const SamplingOptions& s, Generator& gen) {
  const int64_t b = logits.size(0), t = logits.size(1), v = logits.size(2);
  std::vector<int64_t> out(b);
  for (int64_t r = 0; r < b; ++r)
    out[r] = pick_token(logits.data() + (r * t + t - 1) * v, v, s, gen);
  return out;
}

Tensor DecoderOnlyTransformer::generate(const Tensor& prompt,
                                        int64_t max_new_tokens,
                                        const SamplingOptions& sampling,
                                        Generator& gen,
                                        std::optional<int64_t> eos,
                                        bool use_cache) {
  NoGrad off;
  if (prompt.rank() != 2 || prompt.size(1) == 0)
    throw Error("generate: prompt must be (B,T0) with T0 >= 1, got " + shape_str(prompt.shape()));
  const int64_t b = prompt.size(0), t0 = prompt.size(1), total = t0 + max_new_tokens;
  if (adds_to_embeddings(opt_.positions) && total > opt_.max_len)
    throw Error(fmt::format("generate: {} prompt + {} new tokens exceed max_len {}", t0,
                            max_new_tokens, opt_.max_len));
  Tensor seq = Tensor::full({b, total}, eos ? static_cast<real>(*eos) : 0);
  for (int64_t r = 0; r < b; ++r)
    for (int64_t j = 0; j < t0; ++j) seq[r * total + j] = prompt[r * t0 + j];
  std::vector<KVCache> caches = make_caches();
  std::vector<bool> done(b, false);
  int64_t len = t0;
  auto columns = [&](int64_t lo, int64_t hi) {  // seq[:, lo:hi]
    Tensor out({b, hi - lo});
    for (int64_t r = 0; r < b; ++r)
      for (int64_t j = lo; j < hi; ++j) out[r * (hi - lo) + j - lo] = seq[r * total + j];
    return out;
  };
  Tensor logits =
      use_cache ? forward(columns(0, t0), &caches).value() : forward(columns(0, t0)).value();
  while (len < total) {
    const std::vector<int64_t> next = pick_last(logits, sampling, gen);
    bool all_done = true;
    for (int64_t r = 0; r < b; ++r) {
      if (done[r]) continue;
      seq[r * total + len] = static_cast<real>(next[r]);
      done[r] = eos && next[r] == *eos;
      all_done = all_done && done[r];
    }
    ++len;
    if (all_done || len == total) break;
    logits = use_cache ? forward(columns(len - 1, len), &caches).value()
                       : forward(columns(0, len)).value();
  }
  return columns(0, len);
}

}  // namespace attn::nn
