#include "data/tasks/sequence.h"

#include <algorithm>

#include "autograd/error.h"

namespace attn::data {

const char* sequence_op_name(SequenceOp op) {
  switch (op) {
    case SequenceOp::kReverse:
      return "reversal";
    case SequenceOp::kCopy:
      return "copy";
    case SequenceOp::kSort:
      return "sort";
  }
  return "?";
}

namespace {
SequenceTask::Config validated(SequenceTask::Config c) {
  const std::string task = sequence_op_name(c.op);
  require_length_range(task, c.min_len, c.max_len);
  if (c.alphabet.empty()) throw Error(task + ": alphabet must not be empty");
  return c;
}
}  // namespace

SequenceTask::SequenceTask(Config config)
    : config_(validated(std::move(config))), tokenizer_(Tokenizer::chars(config_.alphabet)) {}

std::string SequenceTask::name() const {
  return sequence_op_name(config_.op);
}

std::vector<int64_t> SequenceTask::transform(std::vector<int64_t> src) const {
  switch (config_.op) {
    case SequenceOp::kReverse:
      std::reverse(src.begin(), src.end());
      break;
    case SequenceOp::kSort:
      std::sort(src.begin(), src.end());  // ids follow the alphabet's order
      break;
    case SequenceOp::kCopy:
      break;
  }
  return src;
}

Example SequenceTask::sample(Generator& gen) const {
  const int64_t len = config_.min_len + gen.randint(config_.max_len - config_.min_len + 1);
  const int64_t n_chars = tokenizer_.vocab_size() - kNumSpecial;
  Example ex;
  ex.src.resize(static_cast<size_t>(len));
  for (auto& id : ex.src) id = kNumSpecial + gen.randint(n_chars);
  ex.tgt = transform(ex.src);
  return ex;
}

}  // namespace attn::data
