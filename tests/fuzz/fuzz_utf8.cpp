// libFuzzer harness: the UTF-8 splitter and the tokenizers of data/ (what a --text-file corpus,
// a task's alphabet and every encode/decode go through).
//
//   scripts/fuzz utf8 600
//
// The input is "alphabet \0 text" (no \0: the whole input is both). The contract checked:
// invalid UTF-8 is rejected with attn::Error, never a crash; for valid text the char tokenizer
// built from the text decodes its own encoding back to the text exactly, an alphabet's
// tokenizer maps every character to a known id or UNK, and a word tokenizer built from the
// text's words decodes their encoding to the words joined by single spaces (a word spelled
// like a special token, "<unk>", is that token and decodes to nothing).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/error.h"
#include "data/corpus.h"
#include "data/tokenizer.h"
#include "data/utf8.h"

namespace {

namespace d = attn::data;

[[noreturn]] void bug(const char* what) {
  std::fprintf(stderr, "fuzz_utf8: %s\n", what);
  std::abort();
}

void check_chars(const std::string& text) {
  const d::Tokenizer tok = d::Tokenizer::chars_of(text);
  if (tok.decode(tok.encode(text)) != text) bug("chars_of(text): decode(encode(text)) != text");
  d::CharCorpus corpus(text);  // what `attnlab train charlm --text-file` builds
}

void check_alphabet(const std::string& alphabet, const std::string& text) {
  const d::Tokenizer tok = d::Tokenizer::chars(alphabet);
  for (int64_t id : tok.encode(text))
    if (id < d::kUnk || id >= tok.vocab_size() || (id > d::kUnk && id < d::kNumSpecial))
      bug("chars(alphabet).encode gave an id that is neither UNK nor a character's");
}

void check_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  const d::Tokenizer tok = d::Tokenizer::words(words);
  std::string joined;  // a word spelled like a special token ("<unk>") is that token: skipped
  for (const auto& w : words)
    if (!d::Vocab::is_special(tok.vocab().id(w))) joined += (joined.empty() ? "" : " ") + w;
  if (tok.decode(tok.encode(text)) != joined) bug("words: decode(encode(text)) != joined words");
}

template <class F>
void expect_error_or_ok(F f) {
  try {
    f();
  } catch (const attn::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t cut = input.find('\0');
  const std::string alphabet = input.substr(0, cut);
  const std::string text = cut == std::string::npos ? input : input.substr(cut + 1);
  expect_error_or_ok([&] { d::utf8_chars(text, "fuzz"); });
  expect_error_or_ok([&] { check_chars(text); });
  expect_error_or_ok([&] { check_alphabet(alphabet, text); });
  expect_error_or_ok([&] { check_words(text); });
  return 0;
}
