// Character corpora for language modelling: a built-in toy-grammar text or any UTF-8 file.
//
//   using namespace attn::data;
//   CharCorpus corpus(toy_grammar_text(2000, /*seed=*/0));      // or load_text_file("a.txt")
//   auto train = std::make_shared<LanguageModelTask>(corpus, /*block_len=*/64, Split::kTrain);
//   auto val = std::make_shared<LanguageModelTask>(corpus, 64, Split::kValidation);
//   Example ex = train->sample(gen);   // src = 64 chars, tgt = the same window shifted by one
//
// The corpus is split by position: the first (1 - val_fraction) of the characters train, the
// rest validate, so no validation window overlaps a training window.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/task.h"

namespace attn::data {

// Sentences from a small English-like grammar ("the quiet fox watches a red kite near the
// river."), one per line. Deterministic for a seed; about 40 characters per sentence.
std::string toy_grammar_text(int64_t num_sentences, uint64_t seed);

// Reads a whole UTF-8 text file. Throws attn::Error naming the path when it is missing,
// unreadable, a directory, empty, or not valid UTF-8 (with the byte offset).
std::string load_text_file(const std::string& path);

class CharCorpus {
 public:
  // Throws for empty text or val_fraction outside [0, 0.5].
  explicit CharCorpus(const std::string& text, double val_fraction = 0.1);

  const Tokenizer& tokenizer() const { return tokenizer_; }
  const std::vector<int64_t>& train_ids() const { return train_; }
  const std::vector<int64_t>& val_ids() const { return val_; }

 private:
  Tokenizer tokenizer_;
  std::vector<int64_t> train_, val_;
};

enum class Split { kTrain, kValidation };

// Random windows of block_len + 1 characters from one split of a corpus.
class LanguageModelTask final : public Task {
 public:
  // Throws when block_len <= 0 or the split is shorter than block_len + 1 characters.
  LanguageModelTask(const CharCorpus& corpus, int64_t block_len, Split split);

  std::string name() const override { return "charlm"; }
  TaskKind kind() const override { return TaskKind::kLanguageModel; }
  const Tokenizer& tokenizer() const override { return tokenizer_; }
  int64_t max_src_len() const override { return block_len_; }
  int64_t max_tgt_len() const override { return block_len_; }
  Example sample(Generator& gen) const override;
  // Non-overlapping windows covering the split in order (a deterministic evaluation set).
  std::vector<Example> all_windows() const;

 private:
  Example window(int64_t start) const;
  Tokenizer tokenizer_;
  std::shared_ptr<const std::vector<int64_t>> ids_;
  int64_t block_len_;
};

}  // namespace attn::data
