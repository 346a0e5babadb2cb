// Long-range sequence classification, for comparing sparse and full attention (seed 003's
// challenge): long random strings whose label depends on tokens far apart or on all of them.
//
//   using namespace attn::data;
//   LongRangeTask match({.mode = LongRangeMode::kMatch, .seq_len = 512});
//   Example ex = match.sample(gen);   // ex.src (512 ids), ex.label 0 or 1
//
// kMatch: two '#' markers, one in the first quarter and one in the last quarter; label 1 when
//   the characters right after the two markers are equal (half the examples). The evidence is
//   two tokens about seq_len/2 apart: a local window cannot see both, so a sparse scheme must
//   route it through its global tokens (or fail — which is the interesting measurement).
// kMajority: label 1 when 'a' occurs more often than 'b' (ties are redrawn). Needs every
//   position but no precise pairing: global summary tokens suffice.
#pragma once

#include <string>

#include "data/task.h"

namespace attn::data {

enum class LongRangeMode { kMatch, kMajority };

class LongRangeTask final : public Task {
 public:
  struct Config {
    LongRangeMode mode = LongRangeMode::kMatch;
    int64_t seq_len = 256;              // >= 8
    std::string alphabet = "abcdefgh";  // >= 2 characters, no '#'
  };
  explicit LongRangeTask(Config config);

  std::string name() const override { return "longrange"; }
  TaskKind kind() const override { return TaskKind::kClassification; }
  const Tokenizer& tokenizer() const override { return tokenizer_; }
  int64_t max_src_len() const override { return config_.seq_len; }
  int64_t max_tgt_len() const override { return 0; }
  int64_t num_classes() const override { return 2; }
  Example sample(Generator& gen) const override;

 private:
  Config config_;
  Tokenizer tokenizer_;
};

}  // namespace attn::data
