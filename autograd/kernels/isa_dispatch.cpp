// The public kernel functions (pack.h, panel_gemm.h, small_gemm.h, philox.h, row_stats.h,
// vec_math.h, gelu): each calls the chosen instruction set's copy (isa.h).
#include "autograd/error.h"
#include "autograd/kernels/isa.h"
#include "autograd/kernels/pack.h"
#include "autograd/kernels/vec_math.h"

namespace attn::kernels {

void pack_transposed(
    int64_t n, int64_t k, const real* b, int64_t ldb, real* dst, int64_t dst_stride) {
  active_kernels().pack_transposed(n, k, b, ldb, dst, dst_stride);
}

void panel_gemm(const PanelGemm& g) {
  active_kernels().panel_gemm(g);
}

SharedPanelGemm::SharedPanelGemm(const PanelGemm& g) {
  state_.g = g;
  active_kernels().shared_panel_gemm_start(state_);
}
void SharedPanelGemm::run() {
  active_kernels().shared_panel_gemm_run(state_);
}
SharedPanelGemm::~SharedPanelGemm() {
  active_kernels().shared_panel_gemm_finish(state_);
}

namespace {

// The copy that computes a small product. AVX-512's blocks are 16 columns wide, so a product of
// at most 8 columns (a head of 8 values: P V, dS K; a layer 8 wide) would leave half of every
// register idle: measured (attn_gemm_shapes, one thread), (32,32) x (32,8) ran at 25.7 GFLOP/s
// in the AVX-512 copy against 50.8 in the AVX2 one. Such products take the AVX2 copy, which
// every CPU with AVX-512 runs. The choice depends on the shape alone, not on the threads.
const KernelTable& small_gemm_kernels(const GemmCall& g) {
  const KernelTable& active = active_kernels();
  if (active.isa != Isa::avx512 || g.n > 8) return active;
  static const KernelTable& narrow = kernels_for(Isa::avx2);
  return narrow;
}

}  // namespace

bool small_gemm_fits(const GemmCall& g) {
  return small_gemm_kernels(g).small_gemm_fits(g);
}
void small_gemm(const GemmCall& g) {
  small_gemm_kernels(g).small_gemm(g);
}
void small_gemm(const GemmCall& g, const SoftmaxBackwardStore& store) {
  small_gemm_kernels(g).small_gemm_softmax_store(g, store);
}

void philox_words(uint64_t seed, int64_t first, int64_t n, uint32_t* out) {
  if (first % 4 != 0 || first < 0 || n < 0)
    throw Error("philox_words: first must be a non-negative multiple of 4 (a block's start)");
  active_kernels().philox_words(seed, first, n, out);
}

void philox_mask_multiply(uint64_t seed,
                          uint32_t threshold,
                          real scale,
                          int64_t first,
                          int64_t n,
                          const real* in,
                          real* out) {
  if (first < 0 || n < 0) throw Error("philox_mask_multiply: first and n must be non-negative");
  active_kernels().philox_mask_multiply(seed, threshold, scale, first, n, in, out);
}

RowMoments row_moments(const real* x, int64_t c) {
  return active_kernels().row_moments(x, c);
}
RowMeans layer_norm_grad_means(
    const real* x, const real* dy, const real* w, real mu, real rstd, int64_t c) {
  return active_kernels().layer_norm_grad_means(x, dy, w, mu, rstd, c);
}

void vexp_n(const real* x, real* y, int64_t n) {
  active_kernels().vexp_n(x, y, n);
}
void vtanh_n(const real* x, real* y, int64_t n) {
  active_kernels().vtanh_n(x, y, n);
}
void softmax_row(const real* x, real* y, int64_t c) {
  active_kernels().softmax_row(x, y, c);
}
void softmax_prefix_row(real* row, int64_t seen, int64_t cols) {
  active_kernels().softmax_prefix_row(row, seen, cols);
}
void softmax_backward_row(const real* y, const real* dy, real* dx, int64_t c) {
  active_kernels().softmax_backward_row(y, dy, dx, c);
}
void softmax_backward_row_given(const real* y, const real* dy, real* dx, int64_t c, real dot) {
  active_kernels().softmax_backward_row_given(y, dy, dx, c, dot);
}
real log_sum_exp_row(const real* x, int64_t c) {
  return active_kernels().log_sum_exp_row(x, c);
}
void exp_shift_row(const real* x, real shift, real scale, real offset, real* y, int64_t c) {
  active_kernels().exp_shift_row(x, shift, scale, offset, y, c);
}
void log_softmax_backward_row(const real* y, const real* dy, real* dx, int64_t c) {
  active_kernels().log_softmax_backward_row(y, dy, dx, c);
}

void gelu_n(const real* x, real* y, int64_t n, bool tanh_form) {
  active_kernels().gelu_n(x, y, n, tanh_form);
}
void gelu_backward_n(
    const real* x, const real* y, const real* dy, real* dx, int64_t n, bool tanh_form) {
  active_kernels().gelu_backward_n(x, y, dy, dx, n, tanh_form);
}
void gelu_with_slope_n(const real* x, real* y, real* slope, int64_t n, bool tanh_form) {
  active_kernels().gelu_with_slope_n(x, y, slope, n, tanh_form);
}

}  // namespace attn::kernels
