#include "data/task.h"

#include <fmt/format.h>

#include "autograd/error.h"

namespace attn::data {

void require_at_least(const std::string& task, const char* field, int64_t value, int64_t lo) {
  if (value < lo) throw Error(fmt::format("{}: {} must be >= {}, got {}", task, field, lo, value));
}

void require_between(
    const std::string& task, const char* field, int64_t value, int64_t lo, int64_t hi) {
  if (value < lo || value > hi)
    throw Error(fmt::format("{}: {} must be in [{}, {}], got {}", task, field, lo, hi, value));
}

void require_length_range(const std::string& task, int64_t min_len, int64_t max_len) {
  require_at_least(task, "min_len", min_len, 1);
  if (max_len < min_len)
    throw Error(fmt::format("{}: max_len ({}) must be >= min_len ({})", task, max_len, min_len));
}

}  // namespace attn::data
