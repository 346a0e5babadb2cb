#include "autograd/ops/fused/banded_links.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "autograd/error.h"

namespace attn {

LinkedRows linked_rows(const RandomLinks& links,
                       int64_t t_len,
                       int64_t window,
                       bool causal,
                       const std::vector<int64_t>& global_index) {
  auto fail = [&](const std::string& why) {
    return Error(fmt::format("banded_attention: random links: {}", why));
  };
  if (links.per_row < 0) throw fail(fmt::format("per_row must be >= 0, got {}", links.per_row));
  if (static_cast<int64_t>(links.keys.size()) != t_len * links.per_row)
    throw fail(
        fmt::format("{} keys for T = {} rows of {}", links.keys.size(), t_len, links.per_row));
  auto is_global = [&](int64_t i) { return global_index[static_cast<size_t>(i)] >= 0; };
  std::vector<int64_t> count(static_cast<size_t>(t_len) + 1, 0);
  for (int64_t i = 0; i < t_len; ++i)
    for (int64_t n = 0; n < links.per_row; ++n) {
      const int64_t j = links.key(i, n);
      if (j == -1) continue;
      const auto bad = [&](const char* why) {
        return fail(fmt::format("row {} links to key {}: {}", i, j, why));
      };
      if (j < 0 || j >= t_len) throw bad("outside [0, T)");
      if (is_global(i)) throw bad("a global row reads every key");
      if (is_global(j)) throw bad("a global key");
      if (causal ? j >= i - window : std::abs(i - j) <= window)
        throw bad(causal ? "not before the band (causal)" : "inside the band");
      for (int64_t n2 = 0; n2 < n; ++n2)
        if (links.key(i, n2) == j) throw bad("a repeated link");
      ++count[static_cast<size_t>(j) + 1];
    }
  LinkedRows out;
  out.start.assign(count.size(), 0);
  for (size_t j = 1; j < count.size(); ++j) out.start[j] = out.start[j - 1] + count[j];
  out.row.assign(static_cast<size_t>(out.start.back()), 0);
  out.slot.assign(out.row.size(), 0);
  std::vector<int64_t> next(out.start.begin(), out.start.end() - 1);
  for (int64_t i = 0; i < t_len; ++i)
    for (int64_t n = 0; n < links.per_row; ++n)
      if (const int64_t j = links.key(i, n); j >= 0) {
        const auto e = static_cast<size_t>(next[static_cast<size_t>(j)]++);
        out.row[e] = i, out.slot[e] = n;
      }
  return out;
}

}  // namespace attn
