// Plain arrays of N(0, 1) values for the kernel tests (which work below Tensor).
//
//   std::vector<real> a = random_values(gen, m * lda);
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/generator.h"
#include "autograd/real.h"

namespace attn {

inline std::vector<real> random_values(Generator& gen, int64_t count) {
  std::vector<real> v(count);
  for (auto& x : v) x = real(gen.normal());
  return v;
}

}  // namespace attn
