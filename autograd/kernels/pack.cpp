#include "autograd/kernels/pack.h"
#include "autograd/kernels/isa_variant.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace attn::kernels::ATTN_ISA_NS {

// With AVX2 (float), by 8 x 8 tiles: 8 row loads, an in-register transpose, 8 row stores,
// instead of one strided load per value. The ragged edges go one value at a time.
void pack_transposed(
    int64_t n, int64_t k, const real* b, int64_t ldb, real* dst, int64_t dst_stride) {
  int64_t j0 = 0;
#if defined(__AVX2__) && defined(__FMA__) && !defined(ATTN_REAL_DOUBLE)
  int64_t p0 = 0;
  for (; j0 + 8 <= n; j0 += 8)
    for (p0 = 0; p0 + 8 <= k; p0 += 8) {
      __m256 r[8], t[8];
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(b + (j0 + i) * ldb + p0);
      // Pairs, then quads, then the 128-bit halves: row i of the result is column i of r.
      for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
      }
      for (int i = 0; i < 8; i += 4) {
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
      }
      for (int i = 0; i < 4; ++i) {
        t[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
        t[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
      }
      for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + (p0 + i) * dst_stride + j0, t[i]);
    }
  // What the tiles left: columns p >= p0 of the rows j < j0, then the rows j >= j0.
  for (int64_t p = p0; p < k; ++p)
    for (int64_t j = 0; j < j0; ++j) dst[p * dst_stride + j] = b[j * ldb + p];
#endif
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = j0; j < n; ++j) dst[p * dst_stride + j] = b[j * ldb + p];
}

}  // namespace attn::kernels::ATTN_ISA_NS
