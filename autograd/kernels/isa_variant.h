// The kernels each instruction set's copy defines (isa.h), declared in that copy's namespace:
//
//   // in a kernel file, compiled once per instruction set with -DATTN_ISA_NS=avx2 (etc.):
//   #include "autograd/kernels/isa_variant.h"
//   namespace attn::kernels::ATTN_ISA_NS {
//   void panel_gemm(const PanelGemm& g) { ... }     // attn::kernels::avx2::panel_gemm
//   }
//
// cmake/arch.cmake compiles the kernel files (pack, panel_gemm, small_gemm, philox, row_stats,
// vec_math, gelu, isa_table) once per instruction set with that set's -march flag. Everything a
// copy defines is in its namespace (or internal), so no function compiled for AVX-512 can stand
// in for another copy's at link time; scripts/check_isa_symbols checks the object files for it.
// Inside a copy, these declarations make its kernels call each other directly.
#pragma once

#include "autograd/kernels/isa.h"
#include "autograd/kernels/pack.h"
#include "autograd/kernels/vec_math.h"

#ifndef ATTN_ISA_NS  // a build that compiles the kernel files once (no variants): the portable copy
#define ATTN_ISA_NS generic
#endif

namespace attn::kernels::ATTN_ISA_NS {

extern const KernelTable table;  // isa_table.cpp

void pack_transposed(
    int64_t n, int64_t k, const real* b, int64_t ldb, real* dst, int64_t dst_stride);
void panel_gemm(const PanelGemm& g);
void shared_panel_gemm_start(SharedPanelGemm::State& s);
void shared_panel_gemm_run(SharedPanelGemm::State& s);
void shared_panel_gemm_finish(SharedPanelGemm::State& s);
bool small_gemm_fits(const GemmCall& g);
void small_gemm(const GemmCall& g);
void small_gemm_softmax_store(const GemmCall& g, const SoftmaxBackwardStore& store);
void philox_words(uint64_t seed, int64_t first, int64_t n, uint32_t* out);
void philox_mask_multiply(uint64_t seed,
                          uint32_t threshold,
                          real scale,
                          int64_t first,
                          int64_t n,
                          const real* in,
                          real* out);
RowMoments row_moments(const real* x, int64_t c);
RowMeans layer_norm_grad_means(
    const real* x, const real* dy, const real* w, real mu, real rstd, int64_t c);
void vexp_n(const real* x, real* y, int64_t n);
void vtanh_n(const real* x, real* y, int64_t n);
void softmax_row(const real* x, real* y, int64_t c);
void softmax_prefix_row(real* row, int64_t seen, int64_t cols);
void softmax_backward_row(const real* y, const real* dy, real* dx, int64_t c);
void softmax_backward_row_given(const real* y, const real* dy, real* dx, int64_t c, real dot);
real log_sum_exp_row(const real* x, int64_t c);
void exp_shift_row(const real* x, real shift, real scale, real offset, real* y, int64_t c);
void log_softmax_backward_row(const real* y, const real* dy, real* dx, int64_t c);
void gelu_n(const real* x, real* y, int64_t n, bool tanh_form);
void gelu_backward_n(
    const real* x, const real* y, const real* dy, real* dx, int64_t n, bool tanh_form);
void gelu_with_slope_n(const real* x, real* y, real* slope, int64_t n, bool tanh_form);

}  // namespace attn::kernels::ATTN_ISA_NS
