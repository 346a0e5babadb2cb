// A token task: a tokenizer plus a seeded sampler of examples.
//
//   auto task = std::make_shared<attn::data::SequenceTask>(
//       attn::data::SequenceTask::Config{.op = attn::data::SequenceOp::kReverse});
//   attn::Generator gen(1);
//   attn::data::Example ex = task->sample(gen);   // ex.src "abc" -> ex.tgt "cba" (as ids)
//
// Every task draws all its randomness from the Generator it is given, so a stream of examples
// is fully determined by a seed (data/stream.h saves and restores its position).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "autograd/generator.h"
#include "data/tokenizer.h"

namespace attn::data {

// Token ids only; specials (BOS/EOS/PAD) are added by batching (data/batch.h).
struct Example {
  std::vector<int64_t> src;  // the input sequence
  std::vector<int64_t> tgt;  // seq2seq: the output; language model: src shifted by one
  int64_t label = -1;        // classification: the class in [0, num_classes)
};

enum class TaskKind {
  kSeq2Seq,         // src -> tgt (reversal, copy, sort, k-hop, recall)
  kClassification,  // src -> label (anagram order, long-range)
  kLanguageModel,   // predict tgt[t] = next token after src[0..t]
};

class Task {
 public:
  virtual ~Task() = default;
  virtual std::string name() const = 0;
  virtual TaskKind kind() const = 0;
  virtual const Tokenizer& tokenizer() const = 0;
  // Upper bounds of sequence lengths (without specials), for sizing positional tables.
  virtual int64_t max_src_len() const = 0;
  virtual int64_t max_tgt_len() const = 0;
  virtual int64_t num_classes() const { return 0; }
  virtual Example sample(Generator& gen) const = 0;
};

// Fisher-Yates shuffle drawing from gen (std::shuffle's result differs between libraries).
template <class T>
void shuffle(std::vector<T>& v, Generator& gen) {
  for (size_t i = v.size(); i > 1; --i)
    std::swap(v[i - 1], v[static_cast<size_t>(gen.randint(static_cast<int64_t>(i)))]);
}

// Throws attn::Error "<task>: <field> must be <rule>, got <value>" unless lo <= value.
void require_at_least(const std::string& task, const char* field, int64_t value, int64_t lo);
// Same for lo <= value <= hi.
void require_between(
    const std::string& task, const char* field, int64_t value, int64_t lo, int64_t hi);
// min_len >= 1 and max_len >= min_len.
void require_length_range(const std::string& task, int64_t min_len, int64_t max_len);

}  // namespace attn::data
