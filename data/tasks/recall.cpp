#include "data/tasks/recall.h"

#include <fmt/format.h>

#include <numeric>
#include <set>

#include "autograd/error.h"
#include "data/utf8.h"

namespace attn::data {

namespace {
constexpr const char* kQuery = "?";  // marks the query at the end of the input

// Checks that an alphabet is non-empty, free of the query marker and duplicates.
int64_t count_symbols(const std::string& task, const char* field, const std::string& symbols) {
  if (symbols.empty()) throw Error(fmt::format("{}: {} must not be empty", task, field));
  const auto chars = utf8_chars(symbols, task + " " + field);
  std::set<std::string> distinct(chars.begin(), chars.end());
  if (distinct.size() != chars.size() || distinct.count(kQuery))
    throw Error(fmt::format("{}: {} must hold distinct characters other than '{}', got '{}'", task,
                            field, kQuery, symbols));
  return static_cast<int64_t>(chars.size());
}

// The first k ids of a random permutation of [base, base + n).
std::vector<int64_t> distinct_ids(int64_t base, int64_t n, int64_t k, Generator& gen) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  std::iota(ids.begin(), ids.end(), base);
  shuffle(ids, gen);
  ids.resize(static_cast<size_t>(k));
  return ids;
}

// Validates a recall config; returns its tokenizer (keys, then values, then '?').
Tokenizer recall_tokenizer(const RecallTask::Config& c) {
  const int64_t num_keys = count_symbols("recall", "keys", c.keys);
  count_symbols("recall", "values", c.values);
  for (const auto& k : utf8_chars(c.keys, "recall keys"))
    for (const auto& v : utf8_chars(c.values, "recall values"))
      if (k == v) throw Error(fmt::format("recall: '{}' is both a key and a value", k));
  require_between("recall", "num_pairs", c.num_pairs, 1, num_keys);
  return Tokenizer::chars(c.keys + c.values + kQuery);
}

// Validates a k-hop config; returns its tokenizer (the alphabet, then '?').
Tokenizer khop_tokenizer(const KHopTask::Config& c) {
  const int64_t n = count_symbols("khop", "alphabet", c.alphabet);
  require_between("khop", "num_nodes", c.num_nodes, 2, n);
  require_at_least("khop", "hops", c.hops, 1);
  return Tokenizer::chars(c.alphabet + kQuery);
}
}  // namespace

RecallTask::RecallTask(Config config)
    : PairQueryTask(recall_tokenizer(config), config.num_pairs),
      num_keys_(static_cast<int64_t>(utf8_chars(config.keys, "recall keys").size())) {}

Example RecallTask::sample(Generator& gen) const {
  const int64_t num_values = tokenizer_.vocab_size() - kNumSpecial - num_keys_ - 1;
  const std::vector<int64_t> keys = distinct_ids(kNumSpecial, num_keys_, num_pairs_, gen);
  Example ex;
  std::vector<int64_t> values;
  for (int64_t key : keys) {
    values.push_back(kNumSpecial + num_keys_ + gen.randint(num_values));
    ex.src.push_back(key);
    ex.src.push_back(values.back());
  }
  const size_t q = static_cast<size_t>(gen.randint(num_pairs_));
  ex.src.push_back(tokenizer_.vocab().id(kQuery));
  ex.src.push_back(keys[q]);
  ex.tgt = {values[q]};
  ex.label = values[q];
  return ex;
}

KHopTask::KHopTask(Config config)
    : PairQueryTask(khop_tokenizer(config), config.num_nodes), hops_(config.hops) {}

Example KHopTask::sample(Generator& gen) const {
  const int64_t alphabet = tokenizer_.vocab_size() - kNumSpecial - 1;
  const int64_t n = num_pairs_;
  const std::vector<int64_t> nodes = distinct_ids(kNumSpecial, alphabet, n, gen);
  // next[i]: the node that node i points to, any node but itself (no trivial self-loops).
  std::vector<size_t> next(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t j = gen.randint(n - 1);
    next[static_cast<size_t>(i)] = static_cast<size_t>(j >= i ? j + 1 : j);
  }
  // The pairs "node target" appear in a random order, so position says nothing.
  std::vector<size_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), size_t{0});
  shuffle(order, gen);
  Example ex;
  for (size_t i : order) {
    ex.src.push_back(nodes[i]);
    ex.src.push_back(nodes[next[i]]);
  }
  size_t at = static_cast<size_t>(gen.randint(n));
  ex.src.push_back(tokenizer_.vocab().id(kQuery));
  ex.src.push_back(nodes[at]);
  for (int64_t h = 0; h < hops_; ++h) at = next[at];
  ex.tgt = {nodes[at]};
  ex.label = nodes[at];
  return ex;
}

}  // namespace attn::data
