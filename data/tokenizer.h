// Vocabularies and tokenizers: text <-> token ids, with the special tokens every task shares.
//
//   auto tok = attn::data::Tokenizer::chars("abc");      // ids: 6 specials, then a=6 b=7 c=8
//   std::vector<int64_t> ids = tok.encode("cab");        // {8, 6, 7}
//   tok.decode({attn::data::kBos, 8, 6, attn::data::kEos});   // "ca" (specials skipped)
//   auto words = attn::data::Tokenizer::words({"the", "cat", "sat"});
//   words.encode("the cat sat");                         // one id per space-separated word
//
// Ids 0..5 are always PAD, BOS, EOS, MASK, UNK, SEP, so masks and losses can name them without
// knowing the task. Unknown characters or words encode to UNK.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attn::data {

// The special tokens (plain integers, so they compare with ids stored as attn::real).
inline constexpr int64_t kPad = 0;   // fills the short sequences of a batch; never scored
inline constexpr int64_t kBos = 1;   // begin of sequence: the decoder's first input
inline constexpr int64_t kEos = 2;   // end of sequence: what the decoder emits to stop
inline constexpr int64_t kMask = 3;  // BERT's [MASK]
inline constexpr int64_t kUnk = 4;   // a character or word the vocabulary does not hold
inline constexpr int64_t kSep = 5;   // separates prompt and answer in decoder-only sequences
inline constexpr int64_t kNumSpecial = 6;
// Targets equal to this are skipped by the loss and the metrics (PyTorch's ignore_index).
inline constexpr int64_t kIgnoreIndex = -100;

// Specials first, then the given tokens in order (duplicates dropped).
class Vocab {
 public:
  Vocab();
  explicit Vocab(const std::vector<std::string>& tokens);

  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  // The id of a token, or kUnk.
  int64_t id(const std::string& token) const;
  bool contains(const std::string& token) const { return ids_.count(token) != 0; }
  // The text of an id; throws naming the id and the vocabulary size when out of range.
  const std::string& token(int64_t id) const;
  static bool is_special(int64_t id) { return id >= 0 && id < kNumSpecial; }
  // The non-special tokens, in id order.
  std::vector<std::string> regular_tokens() const;

 private:
  void add(const std::string& token);
  std::vector<std::string> tokens_;
  std::map<std::string, int64_t> ids_;
};

class Tokenizer {
 public:
  enum class Level { kChar, kWord };

  // One token per UTF-8 character of `alphabet` (in its order). Empty alphabet is an error.
  static Tokenizer chars(const std::string& alphabet);
  // The distinct characters of `text`, sorted by code point.
  static Tokenizer chars_of(const std::string& text);
  // One token per word (split on whitespace by encode). Empty list is an error.
  static Tokenizer words(const std::vector<std::string>& words);

  std::vector<int64_t> encode(const std::string& text) const;
  // Joins tokens (words with spaces). skip_special drops PAD/BOS/EOS/... ; otherwise they are
  // written as <pad>, <bos>, ...
  std::string decode(const std::vector<int64_t>& ids, bool skip_special = true) const;

  const Vocab& vocab() const { return vocab_; }
  int64_t vocab_size() const { return vocab_.size(); }
  Level level() const { return level_; }

 private:
  Tokenizer(Vocab vocab, Level level) : vocab_(std::move(vocab)), level_(level) {}
  Vocab vocab_;
  Level level_;
};

}  // namespace attn::data
