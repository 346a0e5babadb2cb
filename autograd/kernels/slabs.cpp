#include "autograd/kernels/slabs.h"

#include <cstring>

#include "autograd/kernels/parallel.h"

namespace attn::kernels {

void join_slabs(const std::vector<const real*>& parts,
                const std::vector<int64_t>& widths,
                int64_t outer,
                real* y) {
  int64_t row = 0;
  for (int64_t w : widths) row += w;
  parallel_for(outer, row, [&](int64_t o) {
    real* dst = y + o * row;
    for (size_t i = 0; i < parts.size(); ++i) {
      std::memcpy(dst, parts[i] + o * widths[i], sizeof(real) * widths[i]);
      dst += widths[i];
    }
  });
}

void take_slab(
    const real* src, int64_t outer, int64_t row, int64_t offset, int64_t width, real* out) {
  parallel_for(outer, width, [&](int64_t o) {
    std::memcpy(out + o * width, src + o * row + offset, sizeof(real) * width);
  });
}

void put_slab(
    const real* piece, int64_t outer, int64_t row, int64_t offset, int64_t width, real* dst) {
  parallel_for(outer, width, [&](int64_t o) {
    std::memcpy(dst + o * row + offset, piece + o * width, sizeof(real) * width);
  });
}

void add_slab(
    const real* piece, int64_t outer, int64_t row, int64_t offset, int64_t width, real* dst) {
  parallel_for(outer, width, [&](int64_t o) {
    real* d = dst + o * row + offset;
    const real* p = piece + o * width;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) d[j] += p[j];
  });
}

}  // namespace attn::kernels
