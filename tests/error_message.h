// The message of the attn::Error a piece of code throws, for tests that check several parts of
// one message.
//
//   const std::string msg = attn::testing::error_of([&] { load_checkpoint(path, st); });
//   CHECK(msg.find(path) != std::string::npos);   // "" when nothing was thrown
#pragma once

#include <string>

#include "autograd/error.h"

namespace attn::testing {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace attn::testing
