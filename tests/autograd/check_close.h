// A doctest helper: compare a tensor with expected shape and values (relative 1e-5, float-safe).
//
//   check_close(y.value(), {2, 3}, {0, 0, -1, 3, 3, 2});
//
// Each mismatch is reported with its flat index, so a failure says which element is wrong.
#pragma once

#include <doctest/doctest.h>

#include <vector>

#include "autograd/tensor.h"

namespace attn::test {

inline void check_close(const Tensor& t, const Shape& shape, const std::vector<double>& expected) {
  REQUIRE(t.shape() == shape);
  REQUIRE(t.numel() == static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    INFO("flat index ", i);
    CHECK(t[i] == doctest::Approx(expected[i]));
  }
}

}  // namespace attn::test
