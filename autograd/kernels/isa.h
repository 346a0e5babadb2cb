// Which instruction set the hand kernels run with, chosen once at start-up:
//
//   const attn::kernels::KernelTable& k = attn::kernels::active_kernels();
//   k.panel_gemm(g);                               // what kernels::panel_gemm(g) forwards to
//   attn::kernels::isa_name(attn::kernels::active_isa());   // "avx512", "avx2" or "generic"
//
// The kernels that use vectors (GEMM micro-kernels and packing, exp/softmax/GELU rows, LayerNorm
// row sums, Philox) are compiled once per instruction set, each copy in its own namespace
// (attn::kernels::generic, ::avx2, ::avx512; isa_variant.h), and the public functions in
// attn::kernels call the chosen copy through this table: one indirect call, no cpuid per call.
// The choice is the widest the CPU (and its OS, which must save the wide registers) supports:
//   generic  the portable code (plain arrays, std::fma), no x86 flag; the only one off x86-64
//   avx2     AVX2 + FMA (x86-64-v3), 8 floats per register
//   avx512   AVX-512 F/BW/CD/DQ/VL (x86-64-v4), 16 floats per register
// ATTN_ISA=generic|avx2|avx512 forces one. A value not in that list, or an instruction set this
// CPU cannot run, is an error naming the variable, the value and what the CPU has (attnlab
// exits 2): never an illegal instruction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autograd/kernels/blas.h"
#include "autograd/kernels/panel_gemm.h"
#include "autograd/kernels/philox.h"
#include "autograd/kernels/row_stats.h"
#include "autograd/kernels/small_gemm.h"
#include "autograd/real.h"

namespace attn::kernels {

enum class Isa { generic, avx2, avx512 };

const char* isa_name(Isa isa);
// "generic", "avx2" or "avx512"; anything else (case matters) gives nullopt.
std::optional<Isa> parse_isa(const std::string& text);
// The instruction sets this binary has kernels for and this CPU can run, narrowest first.
std::vector<Isa> runnable_isas();

// The table the kernels run with: ATTN_ISA's if set, else the widest runnable. Decided on the
// first call; a bad ATTN_ISA throws attn::UsageError there (and on every later call).
Isa active_isa();
// For a program's start: checks ATTN_ISA now, so a bad value stops it before any work.
void check_isa_choice();

// One copy of every dispatched kernel (signatures as in the public headers).
struct KernelTable {
  Isa isa;
  void (*pack_transposed)(int64_t, int64_t, const real*, int64_t, real*, int64_t);
  void (*panel_gemm)(const PanelGemm&);
  void (*shared_panel_gemm_start)(SharedPanelGemm::State&);
  void (*shared_panel_gemm_run)(SharedPanelGemm::State&);
  void (*shared_panel_gemm_finish)(SharedPanelGemm::State&);
  bool (*small_gemm_fits)(const GemmCall&);
  void (*small_gemm)(const GemmCall&);
  void (*small_gemm_softmax_store)(const GemmCall&, const SoftmaxBackwardStore&);
  void (*philox_words)(uint64_t, int64_t, int64_t, uint32_t*);
  void (*philox_mask_multiply)(uint64_t, uint32_t, real, int64_t, int64_t, const real*, real*);
  RowMoments (*row_moments)(const real*, int64_t);
  RowMeans (*layer_norm_grad_means)(const real*, const real*, const real*, real, real, int64_t);
  void (*vexp_n)(const real*, real*, int64_t);
  void (*vtanh_n)(const real*, real*, int64_t);
  void (*softmax_row)(const real*, real*, int64_t);
  void (*softmax_prefix_row)(real*, int64_t, int64_t);
  void (*softmax_backward_row)(const real*, const real*, real*, int64_t);
  void (*softmax_backward_row_given)(const real*, const real*, real*, int64_t, real);
  real (*log_sum_exp_row)(const real*, int64_t);
  void (*exp_shift_row)(const real*, real, real, real, real*, int64_t);
  void (*log_softmax_backward_row)(const real*, const real*, real*, int64_t);
  void (*gelu_n)(const real*, real*, int64_t, bool);
  void (*gelu_backward_n)(const real*, const real*, const real*, real*, int64_t, bool);
  void (*gelu_with_slope_n)(const real*, real*, real*, int64_t, bool);
};

// The table in use (active_isa()'s).
const KernelTable& active_kernels();
// A given instruction set's table, for tests that compare them; throws attn::Error when this
// binary has none for it or this CPU cannot run it.
const KernelTable& kernels_for(Isa isa);

}  // namespace attn::kernels
