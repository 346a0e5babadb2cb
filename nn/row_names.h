// The naming rules every open registry shares (mixers, positional score biases): a row's name is
// typed on the command line, compared ignoring case, and quoted safely in refusals.
//
//   if (!row_names::valid(name)) throw UsageError("... '" + row_names::shown(name) + "' ...");
//   if (row_names::lowered(a) == row_names::lowered(b)) ...   // the same name to a user
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>

namespace attn::nn::row_names {

inline std::string lowered(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Non-empty, letters, digits, '_', '-' and '.' only: a word the shell and --variants lists keep.
inline bool valid(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

// A name or file as a refusal quotes it: control bytes as \xNN. A NUL would end what() inside
// the quotes, and an escape sequence from a plugin's name would reach the terminal.
inline std::string shown(const std::string& name) {
  std::string out;
  for (const char c : name) {
    const auto b = static_cast<unsigned char>(c);
    out += b < 0x20 || b == 0x7f ? fmt::format("\\x{:02x}", b) : std::string(1, c);
  }
  return out;
}

// "built in", or "from FILE" for a plugin's row.
inline std::string origin_text(const std::string& origin) {
  return origin.empty() ? std::string("built in") : "from " + shown(origin);
}

}  // namespace attn::nn::row_names
