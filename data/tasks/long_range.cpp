#include "data/tasks/long_range.h"

#include <fmt/format.h>

#include <algorithm>

#include "autograd/error.h"

namespace attn::data {

LongRangeTask::LongRangeTask(Config config)
    : config_(std::move(config)), tokenizer_(Tokenizer::chars("#")) {
  require_at_least(name(), "seq_len", config_.seq_len, 8);
  if (config_.alphabet.find('#') != std::string::npos)
    throw Error("longrange: alphabet must not contain the marker '#'");
  tokenizer_ = Tokenizer::chars(config_.alphabet + "#");
  if (tokenizer_.vocab_size() - kNumSpecial - 1 < 2)
    throw Error(
        fmt::format("longrange: alphabet must hold at least 2 distinct characters, got '{}'",
                    config_.alphabet));
  const Vocab& v = tokenizer_.vocab();
  if (config_.mode == LongRangeMode::kMajority && !(v.contains("a") && v.contains("b")))
    throw Error("longrange: majority mode needs 'a' and 'b' in the alphabet");
}

Example LongRangeTask::sample(Generator& gen) const {
  const int64_t L = config_.seq_len;
  const int64_t n_chars = tokenizer_.vocab_size() - kNumSpecial - 1;
  auto random_char = [&] { return kNumSpecial + gen.randint(n_chars); };
  Example ex;
  ex.src.resize(static_cast<size_t>(L));
  if (config_.mode == LongRangeMode::kMatch) {
    for (auto& id : ex.src) id = random_char();
    const int64_t marker = tokenizer_.vocab().id("#");
    const int64_t i = gen.randint(L / 4 - 1);              // first quarter (i + 1 too)
    const int64_t j = L - L / 4 + gen.randint(L / 4 - 1);  // last quarter
    const int64_t first = random_char();
    ex.label = gen.uniform() < 0.5 ? 1 : 0;
    int64_t second = first;
    if (ex.label == 0) {  // any other character, uniformly
      second = kNumSpecial + gen.randint(n_chars - 1);
      if (second >= first) ++second;
    }
    ex.src[static_cast<size_t>(i)] = marker;
    ex.src[static_cast<size_t>(i + 1)] = first;
    ex.src[static_cast<size_t>(j)] = marker;
    ex.src[static_cast<size_t>(j + 1)] = second;
    return ex;
  }
  const int64_t a = tokenizer_.vocab().id("a"), b = tokenizer_.vocab().id("b");
  int64_t diff = 0;
  do {
    for (auto& id : ex.src) id = random_char();
    diff =
        std::count(ex.src.begin(), ex.src.end(), a) - std::count(ex.src.begin(), ex.src.end(), b);
  } while (diff == 0);
  ex.label = diff > 0 ? 1 : 0;
  return ex;
}

}  // namespace attn::data
