// Reversal, copy and sort: a random string in, a transformed string out.
//
//   using namespace attn::data;
//   SequenceTask rev({.op = SequenceOp::kReverse, .min_len = 8, .max_len = 16});
//   attn::Generator gen(0);
//   Example ex = rev.sample(gen);     // src "qhdk..." -> tgt "...kdhq"  (token ids)
//
// Lengths are drawn uniformly from [min_len, max_len]; characters uniformly from the alphabet.
// Sort orders characters by their position in the alphabet (so "dcba" as alphabet sorts
// descending). The reversal task is the running example of the course's Transformer chapter.
#pragma once

#include <string>

#include "data/task.h"

namespace attn::data {

enum class SequenceOp { kReverse, kCopy, kSort };

class SequenceTask final : public Task {
 public:
  struct Config {
    SequenceOp op = SequenceOp::kReverse;
    int64_t min_len = 1;
    int64_t max_len = 16;
    std::string alphabet = "abcdefghijklmnopqrstuvwxyz";
  };
  // Throws attn::Error naming the field for min_len <= 0, max_len < min_len, empty alphabet.
  explicit SequenceTask(Config config);

  std::string name() const override;
  TaskKind kind() const override { return TaskKind::kSeq2Seq; }
  const Tokenizer& tokenizer() const override { return tokenizer_; }
  int64_t max_src_len() const override { return config_.max_len; }
  int64_t max_tgt_len() const override { return config_.max_len; }
  Example sample(Generator& gen) const override;

  // The output for a given input (ids), e.g. to check a model's answer.
  std::vector<int64_t> transform(std::vector<int64_t> src) const;
  const Config& config() const { return config_; }

 private:
  Config config_;
  Tokenizer tokenizer_;
};

// "reversal", "copy", "sort".
const char* sequence_op_name(SequenceOp op);

}  // namespace attn::data
