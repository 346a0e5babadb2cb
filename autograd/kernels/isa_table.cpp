// This instruction set's table of kernels (isa.h): compiled once per instruction set, like the
// kernel files, so each copy's table points at that copy's functions.
#include "autograd/kernels/isa_variant.h"

namespace attn::kernels::ATTN_ISA_NS {

const KernelTable table{.isa = Isa::ATTN_ISA_NS,
                        .pack_transposed = pack_transposed,
                        .panel_gemm = panel_gemm,
                        .shared_panel_gemm_start = shared_panel_gemm_start,
                        .shared_panel_gemm_run = shared_panel_gemm_run,
                        .shared_panel_gemm_finish = shared_panel_gemm_finish,
                        .small_gemm_fits = small_gemm_fits,
                        .small_gemm = small_gemm,
                        .small_gemm_softmax_store = small_gemm_softmax_store,
                        .philox_words = philox_words,
                        .philox_mask_multiply = philox_mask_multiply,
                        .row_moments = row_moments,
                        .layer_norm_grad_means = layer_norm_grad_means,
                        .vexp_n = vexp_n,
                        .vtanh_n = vtanh_n,
                        .softmax_row = softmax_row,
                        .softmax_prefix_row = softmax_prefix_row,
                        .softmax_backward_row = softmax_backward_row,
                        .softmax_backward_row_given = softmax_backward_row_given,
                        .log_sum_exp_row = log_sum_exp_row,
                        .exp_shift_row = exp_shift_row,
                        .log_softmax_backward_row = log_softmax_backward_row,
                        .gelu_n = gelu_n,
                        .gelu_backward_n = gelu_backward_n,
                        .gelu_with_slope_n = gelu_with_slope_n};

}  // namespace attn::kernels::ATTN_ISA_NS
