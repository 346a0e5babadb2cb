// Token ids as the labels of an attention heatmap's rows and columns: BOS as "<s>", EOS as
// "</s>", every other id decoded and made visible (display_token: ' ' -> '␣').
//
//   std::vector<std::string> keys = kit::token_labels(tok, ex.src);   // "c", "a", "t"
//   std::string first = kit::token_label(tok, data::kBos);            // "<s>"
//   kit::Seq2SeqLabels l = kit::seq2seq_labels(tok, ex, /*src_eos=*/true);
//   l.src;  l.decoder;   // "c" "a" "t" "</s>";  "<s>" "t" "a" "c" (the decoder's input)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/task.h"
#include "data/tokenizer.h"
#include "experiments/report/scale.h"

namespace attn::experiments::kit {

inline std::string token_label(const data::Tokenizer& tok, int64_t id) {
  if (id == data::kBos) return "<s>";
  if (id == data::kEos) return "</s>";
  return display_token(tok.decode({id}));
}

inline std::vector<std::string> token_labels(const data::Tokenizer& tok,
                                             const std::vector<int64_t>& ids) {
  std::vector<std::string> out;
  for (int64_t id : ids) out.push_back(token_label(tok, id));
  return out;
}

// The labels of a seq2seq example as the model reads it: the source (EOS appended when src_eos)
// and the decoder's input (BOS, then the target).
struct Seq2SeqLabels {
  std::vector<std::string> src, decoder;
};

inline Seq2SeqLabels seq2seq_labels(const data::Tokenizer& tok,
                                    const data::Example& ex,
                                    bool src_eos) {
  std::vector<int64_t> src = ex.src, decoder{data::kBos};
  if (src_eos) src.push_back(data::kEos);
  decoder.insert(decoder.end(), ex.tgt.begin(), ex.tgt.end());
  return {token_labels(tok, src), token_labels(tok, decoder)};
}

}  // namespace attn::experiments::kit
