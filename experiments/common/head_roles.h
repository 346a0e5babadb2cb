// What each attention head of a trained encoder-decoder does, measured: the attention maps of
// every layer and head, and for each head the mean attention mass it puts on the key a named
// pattern picks out ("the mirrored source position", "the previous token", ...).
//
//   model.eval();
//   Seq2SeqAttention a = record_attention(model, batch.src, batch.tgt_in);  // teacher forced
//   a.of(AttentionKind::kCross)[layer];                     // (B,H,T,S) for heatmaps
//   HeadRoleScores s(AttentionKind::kCross, layers, heads);
//   s.add(layer, a.cross[layer], /*src_len=*/12);          // a batch of unpadded length-12 rows
//   s.score(layer, head, 0);                                // mean mass on pattern 0 ("backward")
//   s.role(layer, head, 0.5);                               // best pattern if >= 0.5, else "mixed"
//
// Layout (L = source length; the decoder reads BOS y_1 .. y_L, and its row t produces output
// token t, which for reversal is source token L-1-t):
//   encoder self-attention  (L, L)
//   decoder self-attention  (L+1, L+1), causal; key 0 is BOS
//   cross-attention         (L+1, L): decoder rows over source keys; row L produces EOS
// A row counts toward a pattern only when the pattern names a key there and no other pattern of
// the same kind names the same key (the middle row of an odd-length source is both "forward"
// and "backward", say): a high score then cannot come from another pattern's rows.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autograd/tensor.h"
#include "nn/transformer/seq2seq.h"

namespace attn::experiments {

enum class AttentionKind { kEncoderSelf, kDecoderSelf, kCross };
inline constexpr AttentionKind kAttentionKinds[] = {
    AttentionKind::kEncoderSelf, AttentionKind::kDecoderSelf, AttentionKind::kCross};
// "encoder_self", "decoder_self", "cross".
std::string kind_name(AttentionKind kind);
// "encoder self-attention", ...
std::string kind_title(AttentionKind kind);

// A relation a head may implement: for source length L and query row q, the key it names
// (-1: none at this row). A composite pattern names no key itself: its score is the sum of its
// parts' scores (the mass on a small window of keys, e.g. a head that spreads itself over the
// token being written and the one just written).
struct HeadPattern {
  std::string name;
  std::string meaning;
  std::function<int64_t(int64_t L, int64_t q)> key;
  std::vector<std::string> parts;  // composite: names of single-key patterns of the same kind
  bool composite() const { return !parts.empty(); }
};
const std::vector<HeadPattern>& head_patterns(AttentionKind kind);

// The attention modules of one kind, layer by layer (to read their weights or set a head mask).
std::vector<nn::MultiheadAttention*> attention_modules(nn::Seq2SeqTransformer& model,
                                                       AttentionKind kind);

// Per layer, (B,H,Tq,Tk) attention weights of one teacher-forced forward pass.
struct Seq2SeqAttention {
  std::vector<Tensor> encoder_self, decoder_self, cross;
  const std::vector<Tensor>& of(AttentionKind kind) const;
};
// src (B,S), tgt_in (B,T) -> every layer's weights (no gradient recorded). Call eval() first so
// dropout does not touch the weights.
Seq2SeqAttention record_attention(nn::Seq2SeqTransformer& model,
                                  const Tensor& src,
                                  const Tensor& tgt_in);

// One head's map (Tq,Tk) out of (B,H,Tq,Tk) weights.
Tensor head_map(const Tensor& weights, int64_t row, int64_t head);

class HeadRoleScores {
 public:
  HeadRoleScores(AttentionKind kind, int64_t layers, int64_t heads);

  // weights (B,H,Tq,Tk) of `layer` for B unpadded examples of source length src_len.
  void add(int64_t layer, const Tensor& weights, int64_t src_len);

  AttentionKind kind() const { return kind_; }
  const std::vector<HeadPattern>& patterns() const { return head_patterns(kind_); }
  // Mean attention mass on the pattern's key over every counted row (0 if none was counted).
  double score(int64_t layer, int64_t head, size_t pattern) const;
  // The same for uniform attention over the allowed keys: the level a score must beat
  // (from the rows given for layer 0).
  double chance(size_t pattern) const;
  // The name of the best-scoring pattern when its score is >= threshold, else "mixed". A single
  // pattern wins over a composite containing it when it alone reaches the threshold.
  std::string role(int64_t layer, int64_t head, double threshold) const;
  // The index of pattern `name` (attn::Error if there is none).
  size_t find(const std::string& name) const;
  // The best score of pattern `name` over every head, and where it is.
  double best(const std::string& name, int64_t* layer = nullptr, int64_t* head = nullptr) const;

 private:
  size_t index(int64_t layer, int64_t head, size_t pattern) const;

  AttentionKind kind_;
  int64_t layers_, heads_;
  std::vector<double> sum_;         // (layer, head, pattern)
  std::vector<double> chance_sum_;  // per pattern, from layer 0's rows
  std::vector<int64_t> rows_;       // counted rows per (layer, pattern), the same for every head
};

}  // namespace attn::experiments
