#include "nn/positional/rope.h"

namespace attn::nn {

Var apply_rope(const Var& x, int64_t start_pos, RopeStyle style, double base) {
  return attn::rope(x, start_pos, style, base);
}

}  // namespace attn::nn
