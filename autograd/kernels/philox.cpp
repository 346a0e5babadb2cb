#include "autograd/kernels/philox.h"
#include "autograd/kernels/isa_variant.h"

#include <algorithm>
#include <cstring>

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace attn::kernels::ATTN_ISA_NS {

namespace {

// The high and low 32 bits of the 64-bit product a * b.
inline void mul_hi_lo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
}

// Blocks computed side by side by philox_words: 16 counters in structure-of-arrays form.
constexpr int kLanes = 16;
constexpr int64_t kBatchWords = 4 * kLanes;

#ifdef __AVX512F__
// GCC 12's AVX-512 shift, multiply, unpack and lane-shuffle intrinsics pass an undefined vector
// as the merge source of their unmasked forms and warn -Wuninitialized about it in every caller
// (GCC bug 105593); silenced for the AVX-512 batch only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
// hi and lo words of m * x for 16 lanes: the AVX2 scheme below on 512-bit vectors (vpmuludq on
// the even lanes and on the odd ones shifted down, masked blends to put the halves in place).
inline void mul_hi_lo16(__m512i m, __m512i x, __m512i& hi, __m512i& lo) {
  const __m512i even = _mm512_mul_epu32(x, m);
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(x, 32), m);
  hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
  lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

// The 64 words of blocks [block0, block0 + 16), in stream order: all 16 blocks in one vector
// per counter word, so the ten rounds cost half the AVX2 batch's instructions.
void philox_batch(uint64_t block0, PhiloxKey key, uint32_t* out) {
  alignas(64) uint32_t low[kLanes], high[kLanes];  // the counters' words 0 and 1; 2 and 3 are 0
  for (int l = 0; l < kLanes; ++l) {
    const uint64_t block = block0 + static_cast<uint64_t>(l);
    low[l] = static_cast<uint32_t>(block);
    high[l] = static_cast<uint32_t>(block >> 32);
  }
  __m512i c0 = _mm512_load_si512(low), c1 = _mm512_load_si512(high);
  __m512i c2 = _mm512_setzero_si512(), c3 = _mm512_setzero_si512();
  const __m512i m0 = _mm512_set1_epi32(static_cast<int>(kPhiloxM0));
  const __m512i m1 = _mm512_set1_epi32(static_cast<int>(kPhiloxM1));
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < kPhiloxRounds; ++round) {
    __m512i hi0, lo0, hi1, lo1;
    mul_hi_lo16(m0, c0, hi0, lo0);
    mul_hi_lo16(m1, c2, hi1, lo1);
    c0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32(static_cast<int>(k0)));
    c2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32(static_cast<int>(k1)));
    c1 = lo1;
    c3 = lo0;
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  // Transpose to stream order. Within each 128-bit lane L the unpacks gather whole blocks:
  // b0 holds blocks 4L, b1 blocks 4L+1, b2 4L+2, b3 4L+3 (L = 0..3). The lane shuffles then
  // collect blocks 0-3, 4-7, 8-11 and 12-15 into the four output vectors.
  const __m512i t0 = _mm512_unpacklo_epi32(c0, c1), t1 = _mm512_unpackhi_epi32(c0, c1);
  const __m512i t2 = _mm512_unpacklo_epi32(c2, c3), t3 = _mm512_unpackhi_epi32(c2, c3);
  const __m512i b0 = _mm512_unpacklo_epi64(t0, t2), b1 = _mm512_unpackhi_epi64(t0, t2);
  const __m512i b2 = _mm512_unpacklo_epi64(t1, t3), b3 = _mm512_unpackhi_epi64(t1, t3);
  const __m512i b01_low = _mm512_shuffle_i32x4(b0, b1, 0x44);              // blocks 0, 4, 1, 5
  const __m512i b23_low = _mm512_shuffle_i32x4(b2, b3, 0x44);              // blocks 2, 6, 3, 7
  const __m512i b01_high = _mm512_shuffle_i32x4(b0, b1, 0xEE);             // blocks 8, 12, 9, 13
  const __m512i b23_high = _mm512_shuffle_i32x4(b2, b3, 0xEE);             // blocks 10, 14, 11, 15
  _mm512_storeu_si512(out, _mm512_shuffle_i32x4(b01_low, b23_low, 0x88));  // 0, 1, 2, 3
  _mm512_storeu_si512(out + 16, _mm512_shuffle_i32x4(b01_low, b23_low, 0xDD));    // 4, 5, 6, 7
  _mm512_storeu_si512(out + 32, _mm512_shuffle_i32x4(b01_high, b23_high, 0x88));  // 8 .. 11
  _mm512_storeu_si512(out + 48, _mm512_shuffle_i32x4(b01_high, b23_high, 0xDD));  // 12 .. 15
}
#pragma GCC diagnostic pop
#elif defined(__AVX2__)
// hi and lo words of m * x for 8 lanes: vpmuludq multiplies the even 32-bit lanes (as 64-bit
// products); the odd lanes, shifted down, take a second one; blends put the halves back in
// place. Two multiplies, three shifts and two blends for 8 products (the compiler's own
// vectorisation of the scalar loop spent twice the instructions on shuffles).
inline void mul_hi_lo8(__m256i m, __m256i x, __m256i& hi, __m256i& lo) {
  const __m256i even = _mm256_mul_epu32(x, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), m);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

// The 64 words of blocks [block0, block0 + 16), in stream order (block-major, lane-minor).
void philox_batch(uint64_t block0, PhiloxKey key, uint32_t* out) {
  alignas(32) uint32_t w[4][kLanes];  // the counters: w[j][l] is word j of block0 + l
  for (int l = 0; l < kLanes; ++l) {
    const uint64_t block = block0 + static_cast<uint64_t>(l);
    w[0][l] = static_cast<uint32_t>(block);
    w[1][l] = static_cast<uint32_t>(block >> 32);
    w[2][l] = 0;
    w[3][l] = 0;
  }
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(kPhiloxM0));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(kPhiloxM1));
  for (int half = 0; half < kLanes / 8; ++half) {
    auto load = [&](int j) {
      return _mm256_load_si256(reinterpret_cast<const __m256i*>(&w[j][8 * half]));
    };
    __m256i c0 = load(0), c1 = load(1), c2 = load(2), c3 = load(3);
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < kPhiloxRounds; ++round) {
      __m256i hi0, lo0, hi1, lo1;
      mul_hi_lo8(m0, c0, hi0, lo0);
      mul_hi_lo8(m1, c2, hi1, lo1);
      c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
      c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
      c1 = lo1;
      c3 = lo0;
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    // Transpose to stream order: 8 blocks of (c0, c1, c2, c3). Within each 128-bit half, the
    // unpacks gather block b's four words; the permutes then pair the halves' blocks.
    const __m256i t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpackhi_epi32(c0, c1);
    const __m256i t2 = _mm256_unpacklo_epi32(c2, c3), t3 = _mm256_unpackhi_epi32(c2, c3);
    const __m256i b04 = _mm256_unpacklo_epi64(t0, t2), b15 = _mm256_unpackhi_epi64(t0, t2);
    const __m256i b26 = _mm256_unpacklo_epi64(t1, t3), b37 = _mm256_unpackhi_epi64(t1, t3);
    __m256i* dst = reinterpret_cast<__m256i*>(out + 32 * half);
    _mm256_storeu_si256(dst, _mm256_permute2x128_si256(b04, b15, 0x20));      // blocks 0, 1
    _mm256_storeu_si256(dst + 1, _mm256_permute2x128_si256(b26, b37, 0x20));  // blocks 2, 3
    _mm256_storeu_si256(dst + 2, _mm256_permute2x128_si256(b04, b15, 0x31));  // blocks 4, 5
    _mm256_storeu_si256(dst + 3, _mm256_permute2x128_si256(b26, b37, 0x31));  // blocks 6, 7
  }
}
#else
// Without AVX2: the same rounds as plain loops over the 16 lanes (auto-vectorised where the
// target allows).
void philox_batch(uint64_t block0, PhiloxKey key, uint32_t* out) {
  uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    const uint64_t block = block0 + static_cast<uint64_t>(l);
    c0[l] = static_cast<uint32_t>(block);
    c1[l] = static_cast<uint32_t>(block >> 32);
    c2[l] = 0;
    c3[l] = 0;
  }
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < kPhiloxRounds; ++round) {
    for (int l = 0; l < kLanes; ++l) {
      uint32_t hi0, lo0, hi1, lo1;
      mul_hi_lo(kPhiloxM0, c0[l], hi0, lo0);
      mul_hi_lo(kPhiloxM1, c2[l], hi1, lo1);
      c0[l] = hi1 ^ c1[l] ^ k0;
      c2[l] = hi0 ^ c3[l] ^ k1;
      c1[l] = lo1;
      c3[l] = lo0;
    }
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  for (int l = 0; l < kLanes; ++l) {
    out[4 * l] = c0[l];
    out[4 * l + 1] = c1[l];
    out[4 * l + 2] = c2[l];
    out[4 * l + 3] = c3[l];
  }
}
#endif

}  // namespace

// Batch by batch: 64 words into a buffer that stays in L1, then the compare and multiply over the
// part of [first, first + n) the batch covers (compiled at this copy's vector width).
void philox_mask_multiply(uint64_t seed,
                          uint32_t threshold,
                          real scale,
                          int64_t first,
                          int64_t n,
                          const real* in,
                          real* out) {
  const PhiloxKey key = philox_key(seed);
  alignas(64) uint32_t words[kBatchWords];
  for (int64_t word = first - first % 4; word < first + n; word += kBatchWords) {
    philox_batch(static_cast<uint64_t>(word / 4), key, words);
    const int64_t lo = std::max(first, word), hi = std::min(first + n, word + kBatchWords);
    const uint32_t* w = words + (lo - word);
    const real* src = in + (lo - first);
    real* dst = out + (lo - first);
    const int64_t count = hi - lo;
#pragma omp simd
    for (int64_t j = 0; j < count; ++j) dst[j] = src[j] * (w[j] < threshold ? real(0) : scale);
  }
}

// first and n were checked by kernels::philox_words (isa_dispatch.cpp): an exception type's
// inline members compiled here would be AVX-512 code the whole binary might link to.
void philox_words(uint64_t seed, int64_t first, int64_t n, uint32_t* out) {
  const PhiloxKey key = philox_key(seed);
  uint64_t block = static_cast<uint64_t>(first / 4);
  int64_t done = 0;
  for (; done + kBatchWords <= n; done += kBatchWords, block += kLanes)
    philox_batch(block, key, out + done);
  if (done < n) {  // a ragged end: a whole batch into scratch, the words needed copied out
    uint32_t scratch[kBatchWords];
    philox_batch(block, key, scratch);
    std::memcpy(out + done, scratch, static_cast<size_t>(n - done) * sizeof(uint32_t));
  }
}

}  // namespace attn::kernels::ATTN_ISA_NS

// The reference, once: in the portable copy (the other copies' files define ATTN_ISA_VARIANT_COPY).
#ifndef ATTN_ISA_VARIANT_COPY
namespace attn::kernels {

PhiloxBlock philox4x32_10(PhiloxBlock c, PhiloxKey key) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {  // the key schedule: k += W before every round but the first
      key[0] += kPhiloxW0;
      key[1] += kPhiloxW1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    ATTN_ISA_NS::mul_hi_lo(kPhiloxM0, c[0], hi0, lo0);
    ATTN_ISA_NS::mul_hi_lo(kPhiloxM1, c[2], hi1, lo1);
    c = {hi1 ^ c[1] ^ key[0], lo1, hi0 ^ c[3] ^ key[1], lo0};
  }
  return c;
}

}  // namespace attn::kernels
#endif
