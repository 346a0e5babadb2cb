#include "autograd/kernels/philox.h"

#include <cstring>

#include "autograd/error.h"

namespace attn::kernels {

namespace {

// The high and low 32 bits of the 64-bit product a * b.
inline void mul_hi_lo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
}

// Blocks computed side by side by philox_words: 16 counters in structure-of-arrays form, so
// each round is four plain loops over 16 lanes that the compiler turns into vector multiplies
// (vpmuludq: four 32x32->64 products per AVX2 instruction).
constexpr int kLanes = 16;
constexpr int64_t kBatchWords = 4 * kLanes;

// The 64 words of blocks [block0, block0 + 16), in stream order (block-major, lane-minor).
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
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) {
      const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c0[l];
      const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * c2[l];
      const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1[l] ^ k0;
      const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3[l] ^ k1;
      c1[l] = static_cast<uint32_t>(p1);
      c3[l] = static_cast<uint32_t>(p0);
      c0[l] = n0;
      c2[l] = n2;
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

}  // namespace

PhiloxBlock philox4x32_10(PhiloxBlock c, PhiloxKey key) {
  for (int round = 0; round < kPhiloxRounds; ++round) {
    if (round > 0) {  // the key schedule: k += W before every round but the first
      key[0] += kPhiloxW0;
      key[1] += kPhiloxW1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mul_hi_lo(kPhiloxM0, c[0], hi0, lo0);
    mul_hi_lo(kPhiloxM1, c[2], hi1, lo1);
    c = {hi1 ^ c[1] ^ key[0], lo1, hi0 ^ c[3] ^ key[1], lo0};
  }
  return c;
}

void philox_words(uint64_t seed, int64_t first, int64_t n, uint32_t* out) {
  if (first % 4 != 0 || first < 0 || n < 0)
    throw Error("philox_words: first must be a non-negative multiple of 4 (a block's start)");
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

}  // namespace attn::kernels
