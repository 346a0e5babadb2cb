#include "data/tasks/selective_copy.h"

#include <fmt/format.h>

#include <numeric>
#include <set>

#include "autograd/error.h"
#include "data/utf8.h"

namespace attn::data {

namespace {
constexpr const char* kNoise = ".";
constexpr const char* kMarker = "*";

// Validates the config; returns its tokenizer (the alphabet, then '.', then '*').
Tokenizer selective_copy_tokenizer(const SelectiveCopyTask::Config& c) {
  const std::string task = "selective-copy";
  require_at_least(task, "num_tokens", c.num_tokens, 1);
  require_at_least(task, "seq_len", c.seq_len, c.num_tokens);
  if (c.alphabet.empty()) throw Error(task + ": alphabet must not be empty");
  const auto chars = utf8_chars(c.alphabet, task + " alphabet");
  const std::set<std::string> distinct(chars.begin(), chars.end());
  if (distinct.size() != chars.size() || distinct.count(kNoise) || distinct.count(kMarker))
    throw Error(
        fmt::format("{}: alphabet must hold distinct characters other than '{}' and '{}', "
                    "got '{}'",
                    task, kNoise, kMarker, c.alphabet));
  return Tokenizer::chars(c.alphabet + kNoise + kMarker);
}
}  // namespace

SelectiveCopyTask::SelectiveCopyTask(Config config)
    : config_(std::move(config)), tokenizer_(selective_copy_tokenizer(config_)) {}

int64_t SelectiveCopyTask::noise_id() const {
  return tokenizer_.vocab().id(kNoise);
}
int64_t SelectiveCopyTask::marker_id() const {
  return tokenizer_.vocab().id(kMarker);
}

Example SelectiveCopyTask::sample(Generator& gen) const {
  const int64_t t = config_.seq_len, k = config_.num_tokens;
  const int64_t num_data = tokenizer_.vocab_size() - kNumSpecial - 2;
  // num_tokens distinct positions in [0, seq_len): the first k of a shuffled range, in order.
  std::vector<int64_t> order(static_cast<size_t>(t));
  std::iota(order.begin(), order.end(), int64_t{0});
  shuffle(order, gen);
  std::vector<bool> is_data(static_cast<size_t>(t), false);
  for (int64_t i = 0; i < k; ++i)
    is_data[static_cast<size_t>(order[static_cast<size_t>(i)])] = true;
  Example ex;
  ex.src.assign(static_cast<size_t>(t), noise_id());
  for (int64_t p = 0; p < t; ++p) {
    if (!is_data[static_cast<size_t>(p)]) continue;
    ex.src[static_cast<size_t>(p)] = kNumSpecial + gen.randint(num_data);
    ex.tgt.push_back(ex.src[static_cast<size_t>(p)]);
  }
  ex.src.insert(ex.src.end(), static_cast<size_t>(k), marker_id());
  return ex;
}

}  // namespace attn::data
