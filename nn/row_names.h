// The naming rules every open registry shares (mixers, positional score biases, feature maps,
// feed-forward blocks): a row's name is typed on the command line, compared ignoring case, and
// quoted safely in refusals.
//
//   if (!row_names::valid(name)) throw UsageError("... '" + row_names::shown(name) + "' ...");
//   if (row_names::lowered(a) == row_names::lowered(b)) ...   // the same name to a user
//   row_names::check_new_row("score bias", row, bool(row.bias), "has no bias function (.bias)",
//                            {{"rope", "the built-in positional scheme 'rope'"}}, rows_);
//   const ScoreBiasRow* r = row_names::find_row(rows_, "log-distance");
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "autograd/error.h"

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

// A reserved name and what holds it, as a refusal says it: {"rope", "the built-in positional
// scheme 'rope'"}.
using Reserved = std::vector<std::pair<std::string, std::string>>;

// What every registry's add() checks before it takes `row`, in this order, each failure a
// UsageError naming the row: the name is plain; the row has its function (`missing_function` is
// the rest of the refusal, e.g. "has no factory (.make)"); neither a reserved name nor an earlier
// row of `rows` has the name, ignoring case. `kind` begins every message ("mixer", "score bias").
template <class Row>
void check_new_row(const std::string& kind,
                   const Row& row,
                   bool has_function,
                   const std::string& missing_function,
                   const Reserved& reserved,
                   const std::vector<Row>& rows) {
  if (!valid(row.name))
    throw UsageError(
        fmt::format("{} name '{}' must be non-empty and use only letters, digits, '_', '-' and '.'",
                    kind, shown(row.name)));
  if (!has_function) throw UsageError(fmt::format("{} '{}' {}", kind, row.name, missing_function));
  for (const auto& [name, holder] : reserved)
    if (lowered(name) == lowered(row.name))
      throw UsageError(
          fmt::format("{} name '{}' is taken ({}); choose another", kind, row.name, holder));
  for (const Row& r : rows)
    if (lowered(r.name) == lowered(row.name))
      throw UsageError(fmt::format("{} name '{}' is taken ({} '{}', {}); choose another", kind,
                                   row.name, kind, r.name, origin_text(r.origin)));
}

// The row called exactly `name`, or nullptr.
template <class Row>
const Row* find_row(const std::vector<Row>& rows, const std::string& name) {
  for (const Row& r : rows)
    if (r.name == name) return &r;
  return nullptr;
}

// Every row's name, in the order added.
template <class Row>
std::vector<std::string> names_of(const std::vector<Row>& rows) {
  std::vector<std::string> out;
  for (const Row& r : rows) out.push_back(r.name);
  return out;
}

}  // namespace attn::nn::row_names
