// Anagrams at the token level: is this sentence in its original word order?
//
//   using namespace attn::data;
//   AnagramTask task({});
//   Example ex = task.sample(gen);  // src = words of "the cat sat on the mat" (label 1) or of
//                                   // a reordering such as "mat the on sat cat the" (label 0)
//   anagram_demo_sentences();       // the three sentences of the course's section 39.5.1
//
// Sentences follow the template "the <animal> <verb> <prep> the <object>". Animals and objects
// are disjoint word lists, so "the mat sat on the cat" is never an original: the label is a
// function of the word order alone. Every multiset of words appears with both labels, which is
// the point: a model that sees only the multiset (self-attention without positions, a bag of
// words) cannot beat 50%, while one with positional information can reach 100%.
#pragma once

#include <string>
#include <vector>

#include "data/task.h"

namespace attn::data {

class AnagramTask final : public Task {
 public:
  struct Config {
    // Probability that an example is a shuffled (label 0) rather than original sentence.
    double shuffled_fraction = 0.5;
  };
  explicit AnagramTask(Config config);

  std::string name() const override { return "anagram"; }
  TaskKind kind() const override { return TaskKind::kClassification; }
  const Tokenizer& tokenizer() const override { return tokenizer_; }
  int64_t max_src_len() const override { return 6; }
  int64_t max_tgt_len() const override { return 0; }
  int64_t num_classes() const override { return 2; }
  // label 1: an original sentence; label 0: a reordering that differs from it.
  Example sample(Generator& gen) const override;

  // A random sentence of the template, as words.
  std::vector<std::string> random_sentence(Generator& gen) const;
  // The words allowed in each of the template's six slots.
  static std::vector<std::vector<std::string>> slots();

 private:
  Config config_;
  Tokenizer tokenizer_;
};

// "the cat sat on the mat", "the mat sat on the cat", "mat the on sat cat the".
std::vector<std::string> anagram_demo_sentences();

}  // namespace attn::data
