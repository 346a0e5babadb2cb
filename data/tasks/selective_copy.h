// Selective copying (Gu & Dao, 2023, the Mamba paper's synthetic task): a few data tokens
// scattered among noise, to be repeated in order after the input.
//
//   using namespace attn::data;
//   SelectiveCopyTask task({.seq_len = 16, .num_tokens = 3});
//   Example ex = task.sample(gen);
//   // src "..c....a.....c..***" -> tgt "cac": at the i-th '*', emit the i-th data token
//
// The input is seq_len tokens, num_tokens of them data tokens (drawn with repetition from the
// alphabet) at random distinct positions and the rest noise '.', followed by num_tokens markers
// '*'. A model reads per-position logits and is scored on the last num_tokens positions only:
// at the i-th marker it must name the i-th data token. Unlike plain copying, where the data sit
// at fixed offsets, the positions vary between examples, so a model must decide by content which
// tokens to keep (and how many came before): a time-invariant recurrence (a fixed convolution)
// cannot, an input-dependent (selective) one can.
#pragma once

#include <string>

#include "data/task.h"

namespace attn::data {

class SelectiveCopyTask final : public Task {
 public:
  struct Config {
    int64_t seq_len = 32;               // tokens before the markers, >= num_tokens
    int64_t num_tokens = 4;             // data tokens to copy, >= 1
    std::string alphabet = "abcdefgh";  // data tokens: distinct, no '.' or '*'
  };
  explicit SelectiveCopyTask(Config config);

  std::string name() const override { return "selective-copy"; }
  TaskKind kind() const override { return TaskKind::kSeq2Seq; }
  const Tokenizer& tokenizer() const override { return tokenizer_; }
  int64_t max_src_len() const override { return config_.seq_len + config_.num_tokens; }
  int64_t max_tgt_len() const override { return config_.num_tokens; }
  int64_t num_classes() const override { return tokenizer_.vocab_size(); }
  Example sample(Generator& gen) const override;

  int64_t noise_id() const;
  int64_t marker_id() const;

 private:
  Config config_;
  Tokenizer tokenizer_;
};

}  // namespace attn::data
