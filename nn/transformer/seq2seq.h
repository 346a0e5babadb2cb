// The 2017 translation model: token embeddings * sqrt(d_model) + sinusoidal positions, the
// encoder-decoder Transformer, and a linear map to target-vocabulary logits; greedy decoding.
//
//   attn::nn::Seq2SeqOptions o;
//   o.src_vocab = 32; o.tgt_vocab = 32; o.pad_id = 0;
//   o.d_model = 64; o.nhead = 4; o.num_encoder_layers = o.num_decoder_layers = 2;
//   attn::nn::Seq2SeqTransformer model(o, gen);
//   attn::Var logits = model.forward(src_ids, tgt_in_ids);     // (B,S), (B,T) -> (B,T,tgt_vocab)
//   loss = attn::cross_entropy(logits, tgt_out_ids, /*ignore_index=*/0);
//   model.eval();
//   attn::Tensor out = model.greedy_decode(src_ids, /*bos=*/1, /*eos=*/2, /*max_new_tokens=*/20);
//
// Teacher forcing: tgt_in is the target shifted right (starting with BOS), the decoder's
// self-attention is causal, so position t predicts token t+1 from tokens <= t. With pad_id set,
// padded source keys are hidden from the encoder and from the cross-attention, and the padding
// rows of both embeddings get no gradient. Targets must be right-padded (the causal mask then
// hides the padding from every real position; give the padded targets ignore_index in the loss).
//
// Why * sqrt(d_model): the embeddings start with entries ~ 1/sqrt(d_model) in size (xavier), the
// sinusoids ~ 1; the scale makes the token signal as large as the position signal.
//
// Names: src_embedding.weight, tgt_embedding.weight, transformer.* (nn.Transformer's names),
// lm_head.{weight,bias} (absent with tie_output: the logits then use tgt_embedding.weight), and
// with other positions src_pos.weight / tgt_pos.weight (learned) or enc_rel_bias.weight /
// dec_rel_bias.weight (t5_bias).
// Init: every matrix xavier_uniform_ (as the reference implementations of the paper), except
// the position tables: learned ones N(0, 1) as nn.Embedding (entries the size of the sinusoids
// and of the sqrt(d_model)-scaled tokens), T5 ones N(0, 1/d_model) as T5.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "nn/dropout.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/positional/learned.h"
#include "nn/positional/position_kind.h"
#include "nn/positional/t5_bias.h"
#include "nn/transformer/transformer.h"

namespace attn::nn {

struct Seq2SeqOptions : TransformerOptions {
  int64_t src_vocab = 0;
  int64_t tgt_vocab = 0;
  int64_t max_len = 256;          // longest sequence the positional table covers
  std::optional<int64_t> pad_id;  // padding id (same in both vocabularies)
  bool tie_output = false;        // logits = h tgt_embedding.weight^T (the paper shares them)
  // sinusoidal (the paper) or any scheme of nn/positional/position_kind.h. rope, alibi and
  // t5_bias act in the encoder's and the decoder's self-attention only: a source position and a
  // target position are not on one axis, so the cross-attention stays position-free.
  PositionKind positions = PositionKind::kSinusoidal;
  RopeStyle rope_style = RopeStyle::kRotateHalf;  // with PositionKind::kRope
};

class Seq2SeqTransformer : public Module {
 public:
  // dropout_gen: the generator of every dropout mask (see nn/dropout.h for checkpointing it);
  // null makes one seeded from gen.
  Seq2SeqTransformer(const Seq2SeqOptions& options,
                     Generator& gen,
                     std::shared_ptr<Generator> dropout_gen = nullptr);

  // src_ids (B,S), tgt_ids (B,T) -> logits (B,T,tgt_vocab). Causal decoder; pad masks by pad_id.
  Var forward(const Tensor& src_ids, const Tensor& tgt_ids);

  // src_ids (B,S) -> memory (B,S,d_model).
  Var encode(const Tensor& src_ids);
  // tgt_ids (B,T) at positions start_pos.. -> logits (B,T,V). With caches (one per decoder
  // layer) only the new tokens are given and the earlier ones are read from the caches.
  Var decode(const Tensor& tgt_ids,
             const Var& memory,
             const Tensor& src_ids,
             std::vector<DecoderLayerCache>* caches = nullptr,
             int64_t start_pos = 0);

  // Greedy decoding (call eval() first): BOS, then the argmax token until every row has produced
  // EOS or max_new_tokens are out. Returns (B, steps) generated ids without the BOS; after its EOS
  // a row is filled with EOS. use_cache = false recomputes the whole prefix at each step (the
  // reference the cached path is tested against).
  Tensor greedy_decode(const Tensor& src_ids,
                       int64_t bos,
                       int64_t eos,
                       int64_t max_new_tokens,
                       bool use_cache = true);

  const Seq2SeqOptions& options() const { return opt_; }
  const std::shared_ptr<Generator>& dropout_generator() const { return dropout_gen_; }

  std::shared_ptr<Embedding> src_embedding, tgt_embedding;
  std::shared_ptr<Transformer> transformer;
  std::shared_ptr<Linear> lm_head;   // null with tie_output
  std::shared_ptr<Dropout> dropout;  // on embeddings + positions
  // learned: src_pos / tgt_pos (max_len, d_model); t5_bias: enc_rel_bias (bidirectional
  // buckets) and dec_rel_bias (causal buckets), each shared by the layers of its stack.
  std::shared_ptr<LearnedPositionalEmbedding> src_pos, tgt_pos;
  std::shared_ptr<RelativePositionBias> enc_rel_bias, dec_rel_bias;

 private:
  Var embed(const Embedding& table,
            const LearnedPositionalEmbedding* learned,
            const Tensor& ids,
            int64_t start_pos) const;
  std::optional<Tensor> padding_of(const Tensor& ids) const;

  Seq2SeqOptions opt_;
  std::shared_ptr<Generator> dropout_gen_;
  Tensor pe_;  // (max_len, d_model) sinusoidal table (sinusoidal positions); not in the state dict
};

}  // namespace attn::nn
