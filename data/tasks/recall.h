// Associative recall and k-hop pointer chasing: key-value pairs, then a query.
//
//   using namespace attn::data;
//   RecallTask recall({.num_pairs = 4});
//   // src "a3c7e1b2?c" -> tgt "7": the value stored under the queried key
//   KHopTask hop({.num_nodes = 5, .hops = 2});
//   // src "abbdcedcea?a" (pairs a->b, b->d, c->e, d->c, e->a) -> tgt "d": follow a->b->d
//
// Both are seq2seq tasks with a one-token answer; Example::label also holds the answer's token
// id (num_classes() = vocab size) for encoder-only models. Recall needs one content lookup
// (one attention layer can do it); k-hop needs k lookups in a chain, each using the previous
// answer as its query, so a model needs about k layers.
#pragma once

#include <string>
#include <utility>

#include "data/task.h"

namespace attn::data {

// What recall and k-hop share: input "k1 v1 ... kn vn ? q", a one-token answer.
class PairQueryTask : public Task {
 public:
  TaskKind kind() const override { return TaskKind::kSeq2Seq; }
  const Tokenizer& tokenizer() const override { return tokenizer_; }
  int64_t max_src_len() const override { return 2 * num_pairs_ + 2; }
  int64_t max_tgt_len() const override { return 1; }
  int64_t num_classes() const override { return tokenizer_.vocab_size(); }

 protected:
  PairQueryTask(Tokenizer tokenizer, int64_t num_pairs)
      : tokenizer_(std::move(tokenizer)), num_pairs_(num_pairs) {}
  Tokenizer tokenizer_;
  int64_t num_pairs_;
};

class RecallTask final : public PairQueryTask {
 public:
  struct Config {
    int64_t num_pairs = 8;  // distinct keys per example
    std::string keys = "abcdefghijklmnopqrstuvwxyz";
    std::string values = "0123456789";
  };
  explicit RecallTask(Config config);
  std::string name() const override { return "recall"; }
  Example sample(Generator& gen) const override;

 private:
  int64_t num_keys_ = 0;
};

class KHopTask final : public PairQueryTask {
 public:
  struct Config {
    int64_t num_nodes = 8;  // distinct nodes per example, each with one outgoing pointer
    int64_t hops = 2;       // k
    std::string alphabet = "abcdefghijklmnopqrstuvwxyz";
  };
  explicit KHopTask(Config config);
  std::string name() const override { return "khop"; }
  Example sample(Generator& gen) const override;

 private:
  int64_t hops_;
};

}  // namespace attn::data
