// Dropout's keep/drop decisions, one definition for every op that drops: the dropout op
// (ops/dropout.cpp) and the attention kernel that drops its weights inside its row blocks
// (ops/fused/fused_attention.cpp). Both must draw the same mask for the same seed, so that the
// fused path equals the reference one (softmax -> dropout -> matmul) bit for bit in its mask.
//
//   const kernels::DropoutMask mask = kernels::DropoutMask::make(gen.next_u64(), 0.1);
//   mask.apply(first, n, in, out);   // out[j] = in[j] * m(first + j), any first, any n
//
// Element i of the dropped tensor (its flat index) keeps its value, times 1/(1-p), when word i of
// the Philox stream for `seed` (kernels/philox.h) is at least p 2^32, and becomes 0 otherwise.
// The decision is a pure function of (seed, i): any thread, any row range, any job split, the
// forward or the backward (which regenerates the mask instead of storing it) sees the same one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "autograd/kernels/philox.h"
#include "autograd/real.h"

namespace attn::kernels {

struct DropoutMask {
  uint64_t seed = 0;       // the Philox key: element i's word is word i of the stream for it
  uint32_t threshold = 0;  // words below this are dropped: P(word < t) = t / 2^32 = p
  real scale = 0;          // 1/(1-p) for kept elements (0 when p == 1: everything dropped)

  // p in [0, 1] (checked by the callers, who name the op). p == 1 saturates the threshold (one
  // word in 2^32 would be kept), but the scale is then 0, so every output is 0 anyway.
  static DropoutMask make(uint64_t seed, real p) {
    const double t = std::round(static_cast<double>(p) * 4294967296.0);
    return {.seed = seed,
            .threshold = t >= 4294967295.0 ? UINT32_MAX : static_cast<uint32_t>(t),
            .scale = p < 1 ? 1 / (1 - p) : 0};
  }

  // out[j] = in[j] * m_{first + j} for j in [0, n), m_i = 0 if word_i < threshold else scale.
  // A product even where dropped, so a NaN or inf in `in` stays visible (NaN * 0), as with a
  // stored mask. in == out is allowed. The words are drawn and used in 64-word batches inside
  // the kernel (kernels::philox_mask_multiply), not stored in a step buffer first.
  void apply(int64_t first, int64_t n, const real* in, real* out) const {
    philox_mask_multiply(seed, threshold, scale, first, n, in, out);
  }

  // The same mask on two arrays in place, one draw per element: a[j] *= m, b[j] *= m (an
  // activation and its derivative).
  void apply_to_both(int64_t first, int64_t n, real* a, real* b) const {
    for_each_step(first, n, [&](int64_t done, int64_t count, const uint32_t* w) {
      real* pa = a + done;
      real* pb = b + done;
      const uint32_t t = threshold;
      const real s = scale;
#pragma omp simd
      for (int64_t j = 0; j < count; ++j) {
        const real m = w[j] < t ? real(0) : s;
        pa[j] *= m;
        pb[j] *= m;
      }
    });
  }

 private:
  // Calls body(done, count, words) for steps of at most kStep elements of [first, first + n):
  // words[j] is the word of element first + done + j. Philox words come in 4-word blocks: a start
  // inside a block generates the block's earlier words too and skips them.
  template <class Body>
  void for_each_step(int64_t first, int64_t n, Body&& body) const {
    constexpr int64_t kStep = 1024;
    uint32_t words[kStep + 4];
    for (int64_t done = 0; done < n; done += kStep) {
      const int64_t at = first + done, lead = at % 4, count = std::min(kStep, n - done);
      philox_words(seed, at - lead, count + lead, words);
      body(done, count, words + lead);
    }
  }
};

}  // namespace attn::kernels
