// attn::Error — the one exception type of the library.
//
//   throw attn::Error("matmul: inner dimensions differ: a (2,3) vs b (4,5)");
//
// Messages name the op and the offending shapes or values so a student can act on them.
// The CLI catches Error, prints what() and exits non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace attn {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Bad command-line usage (exit code 2 in the CLI).
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message) {}
};

}  // namespace attn
