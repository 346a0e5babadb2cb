// Philox-4x32-10, the counter-based random generator of Salmon et al. ("Parallel random numbers:
// as easy as 1, 2, 3", SC 2011), the one PyTorch and JAX use for dropout.
//
//   PhiloxBlock r = kernels::philox4x32_10({0, 0, 0, 0}, {0, 0});   // one block, by the book
//   uint32_t words[1024];
//   kernels::philox_words(key, 0, 1024, words);   // word i = lane i%4 of block i/4, vectorised
//
// Unlike a stream generator (mt19937), Philox has no state to advance: output = f(counter, key),
// a keyed bijection of the 128-bit counter. Ten rounds of
//     (hi0, lo0) = M0 * c0,   (hi1, lo1) = M1 * c2           (32x32 -> 64-bit products)
//     c = (hi1 ^ c1 ^ k0,  lo1,  hi0 ^ c3 ^ k1,  lo0)
//     k += (W0, W1)                                           (the Weyl key schedule)
// scramble the counter. So the random words for element i of a tensor are philox(i / 4, key)
// lane i % 4 — any thread can compute any element's word without the ones before it: the masks
// do not depend on the thread count, and backward can regenerate a mask instead of storing it.
//
// philox4x32_10 is the textbook one-block function (the reference); philox_words computes 16
// blocks at a time in vector lanes: all 16 in one vector in the AVX-512 copy, 8 per vector in the
// AVX2 copy, a plain loop in the portable one (kernels/isa.h picks the copy). Measured: the AVX2
// batch takes 8.5 instructions per word against 16 for the compiler's vectorisation of the plain
// loop and 59 without AVX2; the AVX-512 batch takes 0.49 ns per word against the AVX2 batch's
// 1.1 on the same core (attn_microbench philox_words; docs/performance.md, issue 30).
// tests/autograd/philox_test.cpp checks the reference against the Random123 known-answer vectors
// and the fast path against the reference, word for word.
#pragma once

#include <array>
#include <cstdint>

#include "autograd/real.h"

namespace attn::kernels {

using PhiloxBlock = std::array<uint32_t, 4>;  // a counter or an output: 4 x 32 bits
using PhiloxKey = std::array<uint32_t, 2>;

// The multipliers and the key increments (the golden ratio and sqrt(3) - 1, as 32-bit fractions).
inline constexpr uint32_t kPhiloxM0 = 0xD2511F53, kPhiloxM1 = 0xCD9E8D57;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9, kPhiloxW1 = 0xBB67AE85;
inline constexpr int kPhiloxRounds = 10;

// One block by the book: ten rounds, the key bumped between rounds.
PhiloxBlock philox4x32_10(PhiloxBlock counter, PhiloxKey key);

// The key a 64-bit seed stands for: its low and high halves.
inline PhiloxKey philox_key(uint64_t seed) {
  return {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
}

// The n words [first, first + n) of the stream for `seed`: word i is lane i % 4 of
// philox4x32_10({low32(i / 4), high32(i / 4), 0, 0}, philox_key(seed)). first must be a
// multiple of 4 (a chunk starts on a block); n may be anything.
void philox_words(uint64_t seed, int64_t first, int64_t n, uint32_t* out);

// Dropout's multiply with the words drawn in place: out[j] = in[j] * (word_{first + j} <
// threshold ? 0 : scale) for j in [0, n), the words of philox_words(seed, ...) at any first (not
// only a block's start); in == out is allowed. It replaces DropoutMask::apply's loop over
// philox_words into a 1024-word buffer (the loop apply_to_both still uses): 64 words at a time
// stay in L1, and the compare and multiply run at the kernel copy's vector width. With the
// AVX-512 batch it took dropout's cost in W4d from 21-27% of W4's step to 12.5%
// (docs/performance.md, "Dropout's cost"); philox_test.cpp checks every copy against the
// textbook block function.
void philox_mask_multiply(uint64_t seed,
                          uint32_t threshold,
                          real scale,
                          int64_t first,
                          int64_t n,
                          const real* in,
                          real* out);

}  // namespace attn::kernels
