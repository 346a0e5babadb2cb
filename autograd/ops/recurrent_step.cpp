// RecurrentStepOp: the recurrent GEMM shared by the fused RNN / GRU / LSTM steps, forward and
// backward, and the checks of their arguments.
#include "autograd/ops/recurrent_step.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/parallel.h"

namespace attn {

Tensor RecurrentStepOp::begin_step(const char* op,
                                   const Tensor& gx,
                                   int64_t step,
                                   const Tensor& state,
                                   const Tensor& w,
                                   const Tensor& b_ih,
                                   const Tensor& b,
                                   int64_t gates,
                                   int64_t state_parts,
                                   const std::vector<int64_t>& lengths,
                                   bool fold_input) {
  auto fail = [&](const std::string& why) {
    return Error(fmt::format("{}: {} (gx {}, state {}, w_hh {}, b_ih {}, b_hh {})", op, why,
                             shape_str(gx.shape()), shape_str(state.shape()), shape_str(w.shape()),
                             shape_str(b_ih.shape()), shape_str(b.shape())));
  };
  if (w.rank() != 2 || w.size(0) != gates * w.size(1))
    throw fail(fmt::format("w_hh must be ({}*H, H)", gates));
  hidden = w.size(1);
  width = gates * hidden;
  if (gx.rank() != 3 || gx.size(2) != width)
    throw fail(fmt::format("gx must be (T, B, {})", width));
  batch = gx.size(1);
  const Shape want_state =
      state_parts == 1 ? Shape{batch, hidden} : Shape{state_parts, batch, hidden};
  if (state.shape() != want_state) throw fail("state must be " + shape_str(want_state));
  if (b.shape() != Shape{width} || b_ih.shape() != Shape{width})
    throw fail(fmt::format("b_ih and b_hh must be ({})", width));
  if (step < 0 || step >= gx.size(0))
    throw fail(fmt::format("step {} is outside [0, {})", step, gx.size(0)));
  if (!lengths.empty() && static_cast<int64_t>(lengths.size()) != batch)
    throw fail(fmt::format("{} lengths for a batch of {}", lengths.size(), batch));
  t = step;
  state_prev = state;
  w_hh = w;
  active.assign(batch, 1);
  for (size_t r = 0; r < lengths.size(); ++r) {
    if (lengths[r] < 0 || lengths[r] > gx.size(0))
      throw fail(
          fmt::format("length {} of row {} is outside [0, T={}]", lengths[r], r, gx.size(0)));
    active[r] = step < lengths[r];
  }

  // a_x (B,G*H) = gx[t] + b_ih;  a_h (B,G*H) = b_hh + h (B,H) W_hh^T (H,G*H), the GEMM.
  // Folded: a_x stays empty and a_h starts as gx[t] + b_ih + b_hh.
  a_x = fold_input ? Tensor() : Tensor::empty({batch, width});
  Tensor a_h = Tensor::empty({batch, width});
  const real* x = gx.data() + step * batch * width;
  kernels::parallel_for(batch, width, [&](int64_t r) {
    const real* xr = x + r * width;
    real* hr = a_h.data() + r * width;
    if (fold_input) {
      for (int64_t j = 0; j < width; ++j) hr[j] = xr[j] + b_ih[j] + b[j];
      return;
    }
    real* ar = a_x.data() + r * width;
    for (int64_t j = 0; j < width; ++j) {
      ar[j] = xr[j] + b_ih[j];
      hr[j] = b[j];
    }
  });
  kernels::gemm_split({.trans_b = true,
                       .m = batch,
                       .n = width,
                       .k = hidden,
                       .a = h_prev(),
                       .lda = hidden,
                       .b = w.data(),
                       .ldb = hidden,
                       .beta = 1,
                       .c = a_h.data(),
                       .ldc = width});
  return a_h;
}

void RecurrentStepOp::add_column_sums(size_t i, size_t j, const Tensor& d) {
  real* gi = needs_grad(i) ? grad_buffer(i).data() : nullptr;
  real* gj = j != i && needs_grad(j) ? grad_buffer(j).data() : nullptr;
  if (!gi && !gj) return;
  kernels::parallel_column_blocks(width, batch, [&](int64_t j0, int64_t j1) {
    for (int64_t r = 0; r < batch; ++r) {  // row order for every column: thread-count independent
      const real* dr = d.data() + r * width;
      if (gi)
        for (int64_t c = j0; c < j1; ++c) gi[c] += dr[c];
      if (gj)
        for (int64_t c = j0; c < j1; ++c) gj[c] += dr[c];
    }
  });
}

void RecurrentStepOp::finish_backward(const Tensor& da_x,
                                      const Tensor& da_h,
                                      real* dh_prev,
                                      bool dgx_added) {
  if (needs_grad(0) && !dgx_added) {  // dgx[t] += da_x
    real* g = grad_buffer(0).data() + t * batch * width;
    const real* d = da_x.data();
    kernels::parallel_chunks(batch * width, 1, [&](int64_t begin, int64_t count) {
      for (int64_t i = begin; i < begin + count; ++i) g[i] += d[i];
    });
  }
  if (needs_grad(2))  // dW_hh (G*H,H) += da_h^T (G*H,B) h_prev (B,H)
    kernels::gemm_split({.trans_a = true,
                         .m = width,
                         .n = hidden,
                         .k = batch,
                         .a = da_h.data(),
                         .lda = width,
                         .b = h_prev(),
                         .ldb = hidden,
                         .beta = 1,
                         .c = grad_buffer(2).data(),
                         .ldc = hidden});
  if (&da_x == &da_h) {
    add_column_sums(3, 4, da_x);  // db_ih and db_hh: the same sums
  } else {
    add_column_sums(3, 3, da_x);  // db_ih
    add_column_sums(4, 4, da_h);  // db_hh
  }
  if (needs_grad(1))  // dh_prev (B,H) += da_h (B,G*H) W_hh (G*H,H)
    kernels::gemm_split({.m = batch,
                         .n = hidden,
                         .k = width,
                         .a = da_h.data(),
                         .lda = width,
                         .b = w_hh.data(),
                         .ldb = hidden,
                         .beta = 1,
                         .c = dh_prev,
                         .ldc = hidden});
}

Tensor& RecurrentStepOp::grad_buffer(size_t i) {
  return inputs[i].node().own_grad();
}

}  // namespace attn
