// Registry rows for reductions (sum, mean, max).
#include "autograd/registry/registry.h"

namespace attn {

std::vector<OpCase> reduction_cases() {
  std::vector<OpCase> rows;
  return rows;
}

}  // namespace attn
