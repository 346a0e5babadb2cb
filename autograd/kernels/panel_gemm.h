// The products of a linear layer that read its weight, by our own register-blocked kernel:
//
//   forward:         y (rows, out) = x (rows, in) W^T + b, optionally max(., 0)
//   input gradient:  dx (rows, in) = dy (rows, out) W, or dx += that
//
//   panel_gemm({.rows = rows, .k = in, .n = out, .a = x, .lda = in, .b = w, .ldb = in,
//               .b_transposed = true, .row_init = bias, .c = y, .ldc = out});
//
// Why not BLAS: OpenBLAS packs both operands on every call, and C gets a pass of its own before
// the product (BLAS zeroes it, or we pre-fill it with the bias rows). In a linear layer one operand
// is the weight, small (out x in), and the other is thousands of rows of activations. Here the
// weight alone is packed, once per call and shared by the threads, into column panels 16 values
// wide; the activations are read where they lie; and each register block of C starts from the bias
// (or from C, or from zero) and applies the ReLU before its single store. On W4's shapes (4096
// rows, 2 threads) it takes 0.91-0.98x OpenBLAS's time forward (with the bias prefill) and
// 0.87-1.02x for the input gradient; the W4 step went to ~0.95x, W1 to ~0.97x (docs/performance.md,
// "Sixth round").
//
// The weight gradient, dW = dy^T x, stays with BLAS: its long dimension is the reduction, where
// this kernel would need both operands packed; a trial measured 1.06-1.2x OpenBLAS's time.
#pragma once

#include <atomic>
#include <cstdint>

#include "autograd/real.h"

namespace attn::kernels {

// C (rows, n) = A (rows, k) B (k, n) [+ C] [+ row_init in every row] [then max(., 0)], row-major.
struct PanelGemm {
  int64_t rows = 0, k = 0, n = 0;
  const real* a = nullptr;  // A(i, p) = a[i * lda + p]
  int64_t lda = 0;
  const real* b = nullptr;  // B(p, j) = b[p * ldb + j], or b[j * ldb + p] when b_transposed
  int64_t ldb = 0;
  bool b_transposed = false;
  const real* row_init = nullptr;  // n values added to every row of C (a bias); or none
  bool accumulate = false;         // C += A B (C is read); else C = A B (C is only written)
  // (row_init with accumulate, C += A B + row_init, takes the BLAS path: linear never asks)
  bool relu = false;  // C = max(C, 0) at the end
  // C = (A B) * S element-wise at the end, S(i, j) = scale[i * ld_scale + j]: an activation's
  // derivative applied to the input gradient of the layer after it (gelu_linear). Not with
  // row_init, accumulate or relu.
  const real* scale = nullptr;
  int64_t ld_scale = 0;
  real* c = nullptr;
  int64_t ldc = 0;
  // col_sums (k) = the sum over rows of A, written when set: in the input gradient dy W, the
  // bias gradient, taken from A's rows while they are in cache for the product. The same bits
  // whatever the thread count: groups of rows are summed in order, then the groups in order.
  real* col_sums = nullptr;
};

void panel_gemm(const PanelGemm& g);

// The same product, computed by whichever threads call run(): each call claims chunks of rows
// until none are left. For sharing the cores with other work: LinearOp's backward runs the
// weight gradient on one thread and this on the other, and the first to finish helps with the
// rest. The weight is packed (by all threads) on construction, the column sums are finished on
// destruction; every row and sum comes out as from panel_gemm, whoever computed it.
class SharedPanelGemm {
 public:
  explicit SharedPanelGemm(const PanelGemm& g);
  ~SharedPanelGemm();
  SharedPanelGemm(const SharedPanelGemm&) = delete;
  SharedPanelGemm& operator=(const SharedPanelGemm&) = delete;
  void run();  // safe to call from several threads at once

  // What the instruction set's kernels (isa.h) keep between the three calls.
  struct State {
    PanelGemm g;
    bool kernel = false;  // false: the BLAS fallback, done whole by the first run()
    real* panels = nullptr;
    real* partial = nullptr;
    int64_t panel_bytes = 0, partial_bytes = 0, chunks = 0;
    std::atomic<int64_t> next{0};
  };

 private:
  State state_;
};

}  // namespace attn::kernels
