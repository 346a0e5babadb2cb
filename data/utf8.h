// Splitting UTF-8 text into characters (code points), as the char-level tokenizer needs.
//
//   auto chars = attn::data::utf8_chars("héllo", "alphabet");  // {"h", "é", "l", "l", "o"}
//
// Each character is kept as the bytes that encode it (a std::string of 1 to 4 bytes), so a
// vocabulary can map characters to ids without a wide-character type. Invalid UTF-8 (a stray
// continuation byte, a truncated sequence, an overlong or surrogate encoding) is an error that
// names the source and the byte offset.
#pragma once

#include <string>
#include <vector>

namespace attn::data {

std::vector<std::string> utf8_chars(const std::string& text, const std::string& source);

}  // namespace attn::data
