// DropoutOp: inverted dropout — zero each element with probability p, scale the rest by 1/(1-p).
//
// The keep/drop decisions come from Philox-4x32-10 (kernels/philox.h), a counter-based
// generator: element i is dropped when word i of the stream for this call's seed is below
// p * 2^32. One 64-bit seed is drawn from the caller's Generator per call, so the Generator's
// state (what checkpoints save) still decides every mask, and the mask is a pure function of
// (seed, i): the same at any thread count, and regenerated in backward instead of stored.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/philox.h"

namespace attn {

namespace {

// Words below this are dropped: P(word < t) = t / 2^32 = p, to within 2^-32. p == 1 saturates
// (one word in 2^32 would be kept), but then the scale is 0, so every output is 0 anyway.
uint32_t drop_threshold(real p) {
  const double t = std::round(static_cast<double>(p) * 4294967296.0);
  return t >= 4294967295.0 ? UINT32_MAX : static_cast<uint32_t>(t);
}

}  // namespace

struct DropoutOp final : Op {
  uint64_t seed = 0;       // the Philox key of this call: the mask is philox(seed, i) < threshold
  uint32_t threshold = 0;  // p * 2^32
  real scale = 0;          // 1/(1-p) for kept elements (0 when p == 1)

  // x (...) -> y (...);  keep_i = [word_i >= p 2^32] with word_i from Philox(seed, i),
  // y_i = x_i * keep_i / (1-p). Scaling at train time keeps E[y_i] = x_i, so evaluation
  // needs no rescaling. p == 1 drops everything (y = 0), as in PyTorch.
  Tensor forward(const Tensor& x, real p, Generator& gen) {
    seed = gen.next_u64();
    threshold = drop_threshold(p);
    scale = p < 1 ? 1 / (1 - p) : 0;
    return times_mask(x);
  }

  // y_i = x_i * m_i with the mask fixed, so dx_i = dy_i * m_i: the same mask, regenerated.
  void backward() override { accumulate(0, times_mask(dy())); }

  // out_i = in_i * m_i, m_i = 0 if word_i < threshold else scale. A product even where dropped,
  // so a NaN or inf in `in` stays visible (NaN * 0), as with a stored mask.
  Tensor times_mask(const Tensor& in) const {
    Tensor out = Tensor::empty(in.shape());
    const real* pi = in.data();
    real* po = out.data();
    // Chunks start at multiples of kChunk (a whole number of 4-word blocks), and each element's
    // word depends only on its index: the result does not depend on how chunks meet threads.
    kernels::parallel_chunks(in.numel(), 8, [&](int64_t begin, int64_t count) {
      uint32_t words[kernels::kChunk];
      kernels::philox_words(seed, begin, count, words);
      const real* __restrict src = pi + begin;
      real* __restrict dst = po + begin;
      const uint32_t t = threshold;
      const real s = scale;
#pragma omp simd
      for (int64_t j = 0; j < count; ++j) dst[j] = src[j] * (words[j] < t ? real(0) : s);
    });
    return out;
  }

  const char* name() const override {
    return "dropout";
  }
};

Var dropout(const Var& x, real p, Generator& gen, bool training) {
  if (!(p >= 0 && p <= 1))
    throw Error(fmt::format("dropout: p must be a probability in [0, 1], got {} (x {})", p,
                            shape_str(x.shape())));
  if (!training || p == 0) return x;  // the identity: nothing to record, no draws
  auto op = std::make_unique<DropoutOp>();
  Tensor y = op->forward(x.value(), p, gen);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
