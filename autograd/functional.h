// Every differentiable op in attnlab, in one menu.
//
//   #include "autograd/functional.h"
//   using namespace attn;
//   Var h = relu(add(matmul(x, w1, false, true), b1));   // x (B,C) w1 (H,C) b1 (H) -> (B,H)
//   Var loss = cross_entropy(matmul(h, w2, false, true), targets);
//   loss.backward();
//
// Each function is implemented in autograd/ops/<name>.cpp by a named struct (AddOp, MatmulOp,
// SoftmaxOp, ...) whose forward() comment gives the formula and whose backward() comment gives
// the derivative. The fused ops (marked FUSED below) live in autograd/ops/fused/<name>.cpp: each
// does the work of several elementary ops in one, for speed, names the ops it replaces and what
// it gains, and is used by the layers only on the fast path (autograd/mode.h); in reference mode
// the layers spell the same computation out in elementary ops. Shapes: B batch, T time, C channels;
// "..." any leading axes. Every op has a row in autograd/registry/ so the gradcheck sweep and the
// PyTorch parity suite cover it.
#pragma once

#include <optional>
#include <vector>

#include "autograd/generator.h"
#include "autograd/ops/recurrent_cells.h"
#include "autograd/random_links.h"
#include "autograd/tape.h"
#include "autograd/var.h"

namespace attn {

// ---- elementwise arithmetic with numpy broadcasting --------------------------------------
Var add(const Var& a, const Var& b);  // a (...), b (...) broadcastable -> broadcast shape
Var sub(const Var& a, const Var& b);
Var mul(const Var& a, const Var& b);
Var div(const Var& a, const Var& b);
Var neg(const Var& x);
Var add_scalar(const Var& x, real s);  // x + s
Var mul_scalar(const Var& x, real s);  // x * s

// ---- elementwise functions ---------------------------------------------------------------
Var exp(const Var& x);
Var log(const Var& x);   // natural log; x > 0
Var sqrt(const Var& x);  // x > 0
Var pow(const Var& x, real p);
Var abs(const Var& x);
Var tanh(const Var& x);
Var sigmoid(const Var& x);
Var relu(const Var& x);
enum class GeluApprox { kNone, kTanh };  // PyTorch's approximate='none' | 'tanh'
Var gelu(const Var& x, GeluApprox approx = GeluApprox::kNone);
Var silu(const Var& x);
Var elu(const Var& x, real alpha = 1);
Var softplus(const Var& x);  // log(1 + e^x), computed without overflow

// ---- reductions ---------------------------------------------------------------------------
Var sum(const Var& x);                                  // all elements -> ()
Var sum(const Var& x, int axis, bool keepdim = false);  // over one axis
Var mean(const Var& x);
Var mean(const Var& x, int axis, bool keepdim = false);
Var max(const Var& x);  // gradient flows to the (first) argmax
Var max(const Var& x, int axis, bool keepdim = false);

// ---- linear algebra -----------------------------------------------------------------------
// a (...,M,K) or its transpose, b (...,K,N) or (K,N) or their transposes -> (...,M,N).
// Rank 2 to 4. When b is rank 2 and a has batch axes, b is shared by every batch entry (the
// Linear layer case, one GEMM over all rows). Otherwise batch axes must match exactly.
// alpha scales the product inside the GEMM (attention's 1/sqrt(d) at no extra cost).
Var matmul(const Var& a, const Var& b, bool trans_a = false, bool trans_b = false, real alpha = 1);
// x (..., in), weight (out, in), bias (out): y = x weight^T + bias (PyTorch's F.linear), the
// bias added inside the GEMM.
Var linear(const Var& x, const Var& weight, const std::optional<Var>& bias = std::nullopt);
// FUSED relu(linear(x, weight, bias)) as one op (a feed-forward block's first layer): the ReLU
// is applied in place on the GEMM's output, and its backward shares one pass with the bias sum.
Var linear_relu(const Var& x, const Var& weight, const std::optional<Var>& bias = std::nullopt);
// FUSED linear(gelu(x, approx), weight, bias) as one op (a feed-forward block's second layer): one
// pass writes GELU(x) and its derivative, and the backward's input gradient is scaled by the
// derivative in the GEMM's store instead of a GELU backward pass.
Var gelu_linear(const Var& x,
                const Var& weight,
                const std::optional<Var>& bias = std::nullopt,
                GeluApprox approx = GeluApprox::kNone);

// ---- shape ----------------------------------------------------------------------------------
Var reshape(const Var& x, const Shape& shape);            // one extent may be -1
Var transpose(const Var& x);                              // swap the last two axes (a copy)
Var permute(const Var& x, const std::vector<int>& dims);  // y.shape[i] = x.shape[dims[i]]
Var concat(const std::vector<Var>& xs, int axis);
Var stack(const std::vector<Var>& xs, int axis);                // new axis
Var slice(const Var& x, int axis, int64_t start, int64_t end);  // [start, end) on one axis
// x (B,T,C) -> (B,H,T,D): columns [start, end) split into H heads of D (attention's head split,
// one copy; PyTorch's x[..., start:end].unflatten(-1, (H, D)).transpose(1, 2)).
Var head_slice(const Var& x, int64_t heads, int64_t start, int64_t end);

// ---- selection ------------------------------------------------------------------------------
// cond (...) of 0/1 values, broadcastable with a and b: y = cond ? a : b.
Var where(const Tensor& cond, const Var& a, const Var& b);
// mask (...) of 0/1 broadcastable to x: y = mask ? value : x (PyTorch's masked_fill).
Var masked_fill(const Var& x, const Tensor& mask, real value);

// ---- normalisation and probabilities (fused for speed; tests show each equals its
//      composition of primitives) --------------------------------------------------------------
Var softmax(const Var& x);  // over the last axis, max-subtracted for stability
// FUSED softmax(masked_fill(x, mask, lowest)) in one pass: mask (...,C) of 0/1, the same last axis
// as x and broadcast over the others (attention's causal and padding masks).
Var masked_softmax(const Var& x, const Tensor& mask);
Var log_softmax(const Var& x);  // over the last axis
Var layer_norm(const Var& x,
               const Var& weight,
               const Var& bias,
               real eps = 1e-5);                                 // x (...,C), w,b (C)
Var rms_norm(const Var& x, const Var& weight, real eps = 1e-6);  // x (...,C), w (C)

// ---- lookup, regularisation, losses ----------------------------------------------------------
// weight (V,C), indices (...) holding whole numbers in [0,V) -> (...,C); backward scatter-adds.
Var embedding(const Var& weight, const Tensor& indices);
// Inverted dropout: zero with probability p, scale survivors by 1/(1-p). Identity when
// !training or p == 0. Each call draws one seed from gen; the mask is Philox-4x32-10 of
// (seed, element index) (kernels/philox.h), so runs are reproducible at any thread count.
Var dropout(const Var& x, real p, Generator& gen, bool training = true);
// Mean cross-entropy over rows. logits (N,C) or (B,T,C); targets (N) or (B,T) class ids.
// Rows whose target is ignore_index do not count. label_smoothing as PyTorch's.
Var cross_entropy(const Var& logits,
                  const Tensor& targets,
                  int64_t ignore_index = -100,
                  real label_smoothing = 0);
Var mse_loss(const Var& a, const Var& b);  // mean((a-b)^2)

// ---- positions and attention kernels (FUSED except rope; each has registry rows and a test
//      against its composition of primitives)
//      ----------------------------------------------------------------
// Rotary position embedding. Pair i of a row (columns (i, i+D/2) for kRotateHalf as in GPT-NeoX
// and HF llama, columns (2i, 2i+1) for kInterleaved as in RoFormer and Meta's llama) is rotated by
// the angle p * base^(-2i/D), where p = start_pos + t is the row's position on the T axis.
enum class RopeStyle { kRotateHalf, kInterleaved };
Var rope(const Var& x,
         int64_t start_pos,
         RopeStyle style,
         double base = 10000.0);  // x (...,T,D), D even -> (...,T,D)
// softmax(q k^T * scale [+ causal mask]) v computed block by block with an online softmax: the
// Tq x Tk score matrix never exists, forward or backward (FlashAttention-style recomputation).
// q (...,H,Tq,D), k (...,Hkv,Tk,D), v (...,Hkv,Tk,Dv) -> (...,H,Tq,Dv), H a multiple of Hkv (GQA:
// query head h reads kv head h/(H/Hkv), no copy). causal: the queries are the last Tq of the Tk
// positions, query i sees keys j <= i + Tk - Tq (nn::scaled_dot_product_attention's rule).
// scale 0 means 1/sqrt(D).
Var blockwise_attention(const Var& q,
                        const Var& k,
                        const Var& v,
                        bool causal = false,
                        int64_t block_size = 64,
                        real scale = 0);
// Sliding-window attention holding only the band: query i sees keys j with |i - j| <= window
// (causal: 0 <= i - j <= window), softmax(scale q_i . k_j) over those. Scores and weights are
// stored as (...,T,2 window+1) ((...,T,window+1) causal): O(T window) memory and
// O(T window D) time, forward and backward. Global tokens (Longformer) see every key and are
// seen by every query (causal: only keys j <= i), g of them add O(T g) to both. Random links
// (BigBird, autograd/random_links.h): row i also reads the r keys random_links lists for it
// (draw_random_links), O(T r) more. Equal to nn::SlidingWindowAttention's masked dense path
// (nn::sliding_window_mask). q (...,T,D), k (...,T,D), v (...,T,Dv) -> (...,T,Dv); scale 0
// means 1/sqrt(D); global positions in [0, T); links that break random_links.h's rule (or list
// a number of rows other than T) throw attn::Error.
Var banded_attention(const Var& q,
                     const Var& k,
                     const Var& v,
                     int64_t window,
                     bool causal = false,
                     real scale = 0,
                     const std::vector<int64_t>& global_tokens = {},
                     const RandomLinks& random_links = {});
// Attention's weights and a causal product that skip what a causal mask hides
// (kernels/causal_blocks.h): p = softmax(scale q k^T) over the keys each query sees (causal: key
// j <= i + Tk - Tq, 0 elsewhere; else all keys), the scores and softmax fused per block of rows;
// y = tril(a, diagonal) b (PyTorch's torch.tril(a, diagonal) @ b; a's upper part is ignored).
// q (...,H,Tq,D), k (...,Hkv,Tk,D) -> p (...,H,Tq,Tk), Tq <= Tk when causal;  a (...,H,M,K),
// b (...,Hkv,K,N) -> (...,H,M,N). H a multiple of Hkv: head h reads head h / (H/Hkv) of k (of b),
// as GQA.
Var attention_weights(const Var& q, const Var& k, real scale, bool causal);
Var tril_matmul(const Var& a, const Var& b, int64_t diagonal = 0);
// Multi-head attention read in place from projection outputs q (B,Tq,Cq), k (B,Tk,Ck),
// v (B,Tk,Cv): query head h is columns [q_col + h D, q_col + (h+1) D) of q, key/value head g
// columns [k_col + g D, ...) of k and [v_col + g Dv, ...) of v (q, k and v may be one tensor).
// out (B,Tq,H*Dv), head h in columns [h Dv, (h+1) Dv): softmax(scale q_h k_g^T) v_g with
// g = h / (H/Hkv), causal as attention_weights (Tq <= Tk, the queries are the last positions).
// PyTorch: sdpa on x[..., col:col+H*D].unflatten(-1, (H, D)).transpose(1, 2), merged back.
// weights (B,H,Tq,Tk) are the softmax rows, differentiable too.
struct FusedAttentionSpec {
  int64_t heads = 1, kv_heads = 1, head_dim = 0, v_head_dim = 0;
  int64_t q_col = 0, k_col = 0, v_col = 0;
  real scale = 1;
  bool causal = false;
};
struct FusedAttentionOutput {
  Var out, weights;
};
FusedAttentionOutput fused_attention(const Var& q,
                                     const Var& k,
                                     const Var& v,
                                     const FusedAttentionSpec& spec);
// Causal linear attention over feature maps fq, fk > 0 (e.g. elu(x)+1) by prefix sums, O(T D M):
// y_t = fq_t^T S_t / (fq_t . z_t + eps),  S_t = sum_{s<=t} fk_s v_s^T,  z_t = sum_{s<=t} fk_s.
// fq (...,T,D), fk (...,T,D), v (...,T,M) -> y (...,T,M).
Var causal_linear_attention(const Var& fq, const Var& fk, const Var& v, real eps = 1e-6);
// The selective scan of an S6 (Mamba) layer, chunked over time (ops/fused/selective_scan.cpp):
//   h_t = exp(delta_t A) h_{t-1} + delta_t b_t u_t   (per channel e and state n, diagonal),
//   y_t = c_t . h_t + d u_t,   h_0 = 0.
// u, delta (B,T,E), a (E,N), b, c (B,T,N), d (E) -> y (B,T,E). nn/ssm/selective_scan_reference.h
// writes the same recurrence out in elementary ops, one time step after another. chunk: time
// steps per chunk (chunks are scanned in parallel, then their boundary states are chained).
Var selective_scan(const Var& u,
                   const Var& delta,
                   const Var& a,
                   const Var& b,
                   const Var& c,
                   const Var& d,
                   int64_t chunk = 64);

// ---- recurrent steps (autograd/ops/recurrent_cells.h, included above) -----------------------
// One op per time step of an Elman RNN, a GRU or an LSTM, PyTorch's gate layouts:
//   rnn_cell(gx, t, h, w_hh, b_ih, b_hh, nonlinearity, lengths)     -> h' (B,H)
//   gru_cell(gx, t, h, w_hh, b_ih, b_hh, lengths)                   -> h' (B,H)
//   lstm_cell(gx, t, state, w_hh, b_ih, b_hh, lengths)              -> state' (2,B,H) = [h'; c']
// gx (T,B,G*H) holds every step's input projection; row t is read in place.

// ---- operators ------------------------------------------------------------------------------
inline Var operator+(const Var& a, const Var& b) {
  return add(a, b);
}
inline Var operator-(const Var& a, const Var& b) {
  return sub(a, b);
}
inline Var operator*(const Var& a, const Var& b) {
  return mul(a, b);
}
inline Var operator/(const Var& a, const Var& b) {
  return div(a, b);
}
inline Var operator-(const Var& x) {
  return neg(x);
}
inline Var operator+(const Var& x, real s) {
  return add_scalar(x, s);
}
inline Var operator*(const Var& x, real s) {
  return mul_scalar(x, s);
}
inline Var operator*(real s, const Var& x) {
  return mul_scalar(x, s);
}

}  // namespace attn
