// RnnSeq2Seq: the recurrent encoder-decoder, without attention or with Bahdanau / Luong attention.
//
//   attn::nn::RnnSeq2SeqConfig cfg;                 // LSTM, hidden 128, vocab 16, no attention
//   cfg.attention = attn::nn::Seq2SeqAttention::kBahdanau;
//   attn::nn::RnnSeq2Seq model(cfg, gen);
//   // training, teacher forcing: the decoder reads the true previous token
//   attn::Var loss = model.loss(src, tgt_in, tgt_out);     // src (B,S), tgt_* (B,T) token ids
//   loss.backward();
//   // evaluation, greedy: the decoder reads its own previous prediction
//   attn::nn::GreedyResult g = model.greedy_decode(src, /*max_len=*/20);
//   g.tokens;      // (B,20) ids;  g.attention: (B,20,S) weights for a heatmap
//
// Encoder: embedding + recurrent layer (RNN, GRU or LSTM; batch_first) over the source; its
// final state starts the decoder (same cell, layers and hidden size).
// Decoder, per attention kind:
//   none      s_t = Dec(emb(y_{t-1}), s_{t-1});         logits = W_o s_t
//             (the whole source must pass through the final state: the bottleneck)
//   bahdanau  c_t = attend(s_{t-1}, h_enc) (additive);  s_t = Dec([emb(y_{t-1}); c_t], s_{t-1});
//             logits = W_o [s_t; c_t]   (one step at a time: c_t feeds the recurrence)
//   luong     s_t = Dec(emb(y_{t-1}), s_{t-1});         c_t = attend(s_t, h_enc) (dot/general);
//             h~_t = tanh(W_c [c_t; s_t]);              logits = W_o h~_t
//             (no input feeding, so with teacher forcing the decoder runs the whole target in
//             one call and attention is one batched matmul)
// s_t is the top decoder layer's output. Padded source positions (pad_id) are excluded from
// attention and from the encoder's recurrence (per-row lengths); padded targets are ignored by
// the loss. Module names: encoder_embedding, encoder, decoder_embedding, decoder, attention,
// combine (luong), out_proj.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "autograd/generator.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/rnn/recurrent.h"
#include "nn/rnn/seq2seq_attention.h"

namespace attn::nn {

enum class Seq2SeqAttention { kNone, kBahdanau, kLuongDot, kLuongGeneral };

// "none", "bahdanau", "luong_dot", "luong_general" <-> the kind (UsageError on anything else).
Seq2SeqAttention seq2seq_attention_from_name(const std::string& name);
const char* seq2seq_attention_name(Seq2SeqAttention kind);

struct RnnSeq2SeqConfig {
  RecurrentMode cell = RecurrentMode::kLstm;
  Seq2SeqAttention attention = Seq2SeqAttention::kNone;
  int64_t src_vocab = 16;
  int64_t tgt_vocab = 16;
  int64_t embed_dim = 128;
  int64_t hidden_size = 128;
  int64_t num_layers = 1;
  double dropout = 0;   // between recurrent layers
  int64_t pad_id = 0;   // padding token (source and target)
  int64_t bos_id = 1;   // the decoder's first input in greedy decoding
  int64_t eos_id = -1;  // greedy decoding stops once every row has produced it (-1: never)
};

struct Seq2SeqOutput {
  Var logits;     // (B,T,tgt_vocab)
  Var attention;  // (B,T,S) weights; an empty (rank-0) Var without attention
};

struct GreedyResult {
  Tensor tokens;     // (B,steps) predicted ids
  Tensor attention;  // (B,steps,S), or empty without attention
};

class RnnSeq2Seq : public Module {
 public:
  RnnSeq2Seq(const RnnSeq2SeqConfig& config, Generator& gen);

  // Teacher forcing: src (B,S), tgt_in (B,T) (usually [bos, y_1 .. y_{T-1}]).
  Seq2SeqOutput forward(const Tensor& src, const Tensor& tgt_in);
  // Mean cross-entropy of forward(src, tgt_in) against tgt_out (B,T); pad_id targets ignored.
  Var loss(const Tensor& src, const Tensor& tgt_in, const Tensor& tgt_out);
  // Greedy decoding without gradients: feeds back the argmax for max_len steps (fewer when
  // every row has produced eos_id).
  GreedyResult greedy_decode(const Tensor& src, int64_t max_len);

  const RnnSeq2SeqConfig& config() const { return cfg_; }

  std::shared_ptr<Embedding> encoder_embedding, decoder_embedding;
  std::shared_ptr<Recurrent> encoder, decoder;
  std::shared_ptr<BahdanauAttention> bahdanau;  // set for kBahdanau ("attention")
  std::shared_ptr<LuongAttention> luong;        // set for kLuongDot / kLuongGeneral ("attention")
  std::shared_ptr<Linear> combine;              // W_c (H, 2H) for Luong
  std::shared_ptr<Linear> out_proj;             // W_o (V, H) or (V, 2H) for Bahdanau

 private:
  // What the decoder reads from the encoder.
  struct Memory {
    Var outputs;                     // (B,S,H)
    Var keys;                        // Bahdanau's projected memory (B,S,A)
    std::optional<Tensor> pad_mask;  // (B,S), 1 at padding; none when nothing is padded
  };
  Memory encode(const Tensor& src, RecurrentState& state);
  // Decoder inputs y (B,T) from `state` on: logits (B,T,V) and attention (B,T,S). Updates state.
  Seq2SeqOutput decode(const Tensor& tokens, const Memory& memory, RecurrentState& state);
  Seq2SeqOutput decode_bahdanau(const Var& embedded, const Memory& memory, RecurrentState& state);

  RnnSeq2SeqConfig cfg_;
};

}  // namespace attn::nn
