// The fuzz harnesses that read a command line (fuzz_options, fuzz_plugin) cut their input into
// words at newlines: a word may hold any other byte, spaces and NULs included.
//
//   std::vector<std::string> words = attn::fuzz::split_words(text, 24);  // at most 24 words
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attn::fuzz {

inline std::vector<std::string> split_words(const std::string& text, size_t max_words) {
  std::vector<std::string> words;
  size_t start = 0;
  while (words.size() < max_words) {
    const size_t nl = text.find('\n', start);
    words.push_back(text.substr(start, nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return words;
}

}  // namespace attn::fuzz
