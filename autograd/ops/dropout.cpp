// DropoutOp: inverted dropout — zero each element with probability p, scale the rest by 1/(1-p).
//
// The keep/drop decisions come from Philox-4x32-10 (kernels/philox.h), a counter-based
// generator: element i is dropped when word i of the stream for this call's seed is below
// p * 2^32. One 64-bit seed is drawn from the caller's Generator per call, so the Generator's
// state (what checkpoints save) still decides every mask, and the mask is a pure function of
// (seed, i): the same at any thread count, and regenerated in backward instead of stored.
#include <fmt/format.h>

#include <cstdint>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/dropout_mask.h"
#include "autograd/kernels/parallel.h"

namespace attn {

struct DropoutOp final : Op {
  kernels::DropoutMask mask;  // element i kept (times 1/(1-p)) when philox(seed, i) >= p 2^32

  // x (...) -> y (...);  keep_i = [word_i >= p 2^32] with word_i from Philox(seed, i),
  // y_i = x_i * keep_i / (1-p). Scaling at train time keeps E[y_i] = x_i, so evaluation
  // needs no rescaling. p == 1 drops everything (y = 0), as in PyTorch.
  Tensor forward(const Tensor& x, real p, Generator& gen) {
    mask = kernels::DropoutMask::make(gen.next_u64(), p);
    return times_mask(x);
  }

  // y_i = x_i * m_i with the mask fixed, so dx_i = dy_i * m_i: the same mask, regenerated.
  void backward() override { accumulate(0, times_mask(dy())); }

  // out_i = in_i * m_i (kernels/dropout_mask.h). Chunks start at multiples of kChunk, and each
  // element's word depends only on its index: the result does not depend on how chunks meet
  // threads.
  Tensor times_mask(const Tensor& in) const {
    Tensor out = Tensor::empty(in.shape());
    const real* pi = in.data();
    real* po = out.data();
    kernels::parallel_chunks(in.numel(), 8, [&](int64_t begin, int64_t count) {
      mask.apply(begin, count, pi + begin, po + begin);
    });
    return out;
  }

  const char* name() const override { return "dropout"; }
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
