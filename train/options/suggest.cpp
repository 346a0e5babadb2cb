#include "train/options/suggest.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace attn::train::options {

namespace {
std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

int edit_distance(const std::string& a_in, const std::string& b_in) {
  const std::string a = lower(a_in), b = lower(b_in);
  // One row of the dynamic-programming table: row[j] = distance(a[0:i], b[0:j]).
  std::vector<int> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];  // distance(a[0:i-1], b[0:j-1])
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> closest_names(const std::string& word,
                                       const std::vector<std::string>& candidates) {
  const int limit = std::max<int>(2, static_cast<int>(word.size()) / 3);
  const std::string w = lower(word);
  std::vector<std::pair<int, std::string>> scored;
  for (const auto& c : candidates) {
    const std::string lc = lower(c);
    int d = edit_distance(w, lc);
    const bool contains = !w.empty() && (lc.find(w) != std::string::npos ||
                                         (w.size() >= 3 && w.find(lc) != std::string::npos));
    if (contains) d = std::min(d, limit);
    if (d <= limit) scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (auto& [d, c] : scored) out.push_back(c);
  return out;
}

std::string did_you_mean(const std::string& word,
                         const std::vector<std::string>& candidates,
                         const std::string& prefix) {
  auto join = [&](const std::vector<std::string>& names) {
    std::string s;
    for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + prefix + names[i];
    return s;
  };
  const auto close = closest_names(word, candidates);
  if (!close.empty()) return " Did you mean " + join(close) + "?";
  return " Valid names: " + join(candidates) + ".";
}

}  // namespace attn::train::options
