// Which path the layers take: the reference path (the textbook's elementary ops) or the fast
// path (fused kernels).
//
//   attn::set_reference_mode(true);            // or ATTN_REFERENCE=1, or `attnlab ... --reference`
//   auto a = mha.forward(x, x, x);             // tape: matmul, add, head_slice, matmul,
//   attn::tape().print();                      //   mul_scalar, softmax, matmul, permute, ...
//   { attn::ReferenceModeScope fast(false); }  // the fast path inside this scope only
//
// Reference mode: every layer in nn/ is built only from the elementary ops of
// autograd/functional.h that the documents write:
//   linear      x W^T + b           matmul(x, W, false, true) -> add(b)
//   attention   softmax(Q K^T / sqrt(d_k), masked) V
//               matmul(Q, K^T) -> mul_scalar(1/sqrt(d_k)) -> masked_fill (when masked)
//               -> softmax -> dropout (training) -> matmul
//   activations relu, gelu, silu each its own op
// so `break SoftmaxOp::backward` or `break MatmulOp::backward` stops during any layer.
// Three kinds of layer keep one op in both modes, because that op is the algorithm they exist
// to show: BlockwiseAttention and llama's blockwise option (blockwise_attention, the online
// softmax), LinearAttention (causal_linear_attention, prefix sums) and the RNN/GRU/LSTM layers
// (one rnn_cell / gru_cell / lstm_cell op per time step, the gate math written out in its
// backward). Layer norm, RMS norm, rope, embedding and the losses are single ops everywhere.
//
// Fast mode: the same layers call the fused ops of autograd/ops/fused/ (linear with its bias in
// the GEMM, linear_relu, gelu_linear, fused_attention, attention_weights + tril_matmul,
// masked_softmax, causal_linear_attention, banded_attention for sliding windows, selective_scan
// for the S6 layer). Each fused op names there the elementary ops it replaces and what it gains.
// tests/nn/reference_mode_test.cpp runs every row of the layer registry both ways and checks
// that outputs and gradients agree.
//
// The default: ON in a Debug build (NDEBUG not defined), OFF in Release; the environment
// variable ATTN_REFERENCE=1 (or 0) overrides the default, set_reference_mode() overrides both.
// The switch is process-wide (it is read when a layer's forward runs, not when it is built).
#pragma once

namespace attn {

bool reference_mode();
void set_reference_mode(bool on);
// "reference" or "fast": what a run records in its config and report.
const char* path_name();
// True when ATTN_REFERENCE is set: then it, not a caller's default, decides (the CLI gives an
// experiment's own default way only to the variable and to --reference / --fast).
bool reference_mode_from_env();

// Sets the mode for the lifetime of the scope and restores the previous one afterwards.
class ReferenceModeScope {
 public:
  explicit ReferenceModeScope(bool on);
  ~ReferenceModeScope();
  ReferenceModeScope(const ReferenceModeScope&) = delete;
  ReferenceModeScope& operator=(const ReferenceModeScope&) = delete;

 private:
  bool previous_;
};

}  // namespace attn
