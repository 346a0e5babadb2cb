#include "data/tokenizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "autograd/error.h"
#include "data/utf8.h"

namespace attn::data {

namespace {
const char* const kSpecialNames[kNumSpecial] = {"<pad>",  "<bos>", "<eos>",
                                                "<mask>", "<unk>", "<sep>"};
}  // namespace

Vocab::Vocab() {
  for (const char* name : kSpecialNames) add(name);
}

Vocab::Vocab(const std::vector<std::string>& tokens) : Vocab() {
  for (const auto& t : tokens) add(t);
}

void Vocab::add(const std::string& token) {
  if (ids_.count(token)) return;
  ids_.emplace(token, size());
  tokens_.push_back(token);
}

int64_t Vocab::id(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? kUnk : it->second;
}

const std::string& Vocab::token(int64_t id) const {
  if (id < 0 || id >= size())
    throw Error(fmt::format("Vocab: token id {} is outside the vocabulary of size {}", id, size()));
  return tokens_[static_cast<size_t>(id)];
}

std::vector<std::string> Vocab::regular_tokens() const {
  return {tokens_.begin() + kNumSpecial, tokens_.end()};
}

Tokenizer Tokenizer::chars(const std::string& alphabet) {
  if (alphabet.empty()) throw Error("Tokenizer::chars: alphabet is empty");
  return Tokenizer(Vocab(utf8_chars(alphabet, "tokenizer alphabet")), Level::kChar);
}

Tokenizer Tokenizer::chars_of(const std::string& text) {
  if (text.empty()) throw Error("Tokenizer::chars_of: text is empty");
  // UTF-8 byte order equals code point order, so sorting the strings sorts the characters.
  const auto chars = utf8_chars(text, "tokenizer text");
  std::set<std::string> distinct(chars.begin(), chars.end());
  return Tokenizer(Vocab({distinct.begin(), distinct.end()}), Level::kChar);
}

Tokenizer Tokenizer::words(const std::vector<std::string>& words) {
  if (words.empty()) throw Error("Tokenizer::words: word list is empty");
  for (const auto& w : words)
    if (w.empty() || w.find_first_of(" \t\n\r") != std::string::npos)
      throw Error(fmt::format("Tokenizer::words: '{}' is not a single word", w));
  return Tokenizer(Vocab(words), Level::kWord);
}

std::vector<int64_t> Tokenizer::encode(const std::string& text) const {
  std::vector<int64_t> ids;
  if (level_ == Level::kChar) {
    for (const auto& c : utf8_chars(text, "Tokenizer::encode")) ids.push_back(vocab_.id(c));
  } else {
    std::istringstream in(text);
    for (std::string w; in >> w;) ids.push_back(vocab_.id(w));
  }
  return ids;
}

std::string Tokenizer::decode(const std::vector<int64_t>& ids, bool skip_special) const {
  std::string out;
  bool first = true;
  for (int64_t id : ids) {
    if (skip_special && Vocab::is_special(id)) continue;
    if (level_ == Level::kWord && !first) out += ' ';
    out += vocab_.token(id);
    first = false;
  }
  return out;
}

}  // namespace attn::data
