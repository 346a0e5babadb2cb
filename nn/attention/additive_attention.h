// Additive (Bahdanau, "concat") attention scores for multi-head attention, the alternative to the
// scaled dot product that the 2017 Transformer did not choose.
//
//   using namespace attn::nn;
//   Var s = additive_scores(q, k, w);           // q (B,H,Tq,D), k (B,H,Tk,D), w (H,D)
//                                               //   -> s (B,H,Tq,Tk)
//   SdpaOptions opt;  opt.masks.causal = true;  // masks and dropout as in sdpa.h
//   AttentionOutput a = additive_attention(q, k, v, w, opt);   // a.out (B,H,Tq,Dv)
//
//   MultiheadAttentionOptions o;  o.score = AttentionScore::kAdditive;   // inside a layer
//
// Per head h, with the head's query and key already projected (q = x W_Q, k = x W_K):
//
//   s[b,h,i,j] = sum_d w[h,d] tanh(q[b,h,i,d] + k[b,h,j,d])        (= w_h^T tanh(q_i + k_j))
//
// Bahdanau writes v^T tanh(W_q q_i + W_k k_j); inside multi-head attention the matrices W_q, W_k
// would multiply the projections W_Q, W_K, and a product of two linear maps is one linear map,
// so here they are the projections themselves (the projection biases play the role of a bias
// inside the tanh). The only new parameter is w (H,D), Bahdanau's v, one per head.
//
// Why it costs more than the dot product: q_i + k_j is a D-vector for EVERY pair (i,j), so the
// scores pass through a (B,H,Tq,Tk,D) tensor (here (B*H,Tq,Tk,D), the tensors being rank <= 4):
// D times the memory and elementwise work of the (B,H,Tq,Tk) scores, with a tanh per entry, and
// the tape keeps it for the backward pass. q k^T is one GEMM that never forms those D-vectors.
// No 1/sqrt(D) is needed: tanh bounds every term, and w sets the scale.
//
// The computation is built from elementary ops (reshape, broadcast add, tanh, mul, matmul), so
// the tape shows every step and the gradients come from their backward passes. Masks, the bias
// and dropout follow scaled_dot_product_attention (sdpa.h): 1 = hidden, weight exactly 0.
#pragma once

#include <string>

#include "autograd/var.h"
#include "nn/attention/sdpa.h"

namespace attn::nn {

// How multi-head attention compares a query with a key.
enum class AttentionScore {
  kScaledDot,  // q . k / sqrt(D) (the Transformer)
  kAdditive,   // w_h^T tanh(q + k) (Bahdanau)
};
// "dot" | "additive" <-> the kind; an unknown name throws attn::UsageError naming `flag`.
AttentionScore attention_score_from_name(const std::string& name, const char* flag);
const char* attention_score_name(AttentionScore score);

// q (B,H,Tq,D), k (B,H,Tk,D), w (H,D) -> scores (B,H,Tq,Tk), formula above.
Var additive_scores(const Var& q, const Var& k, const Var& w);

// softmax(additive_scores(q, k, w) [+ bias], masked) v with sdpa's masks and dropout.
// v (B,H,Tk,Dv) -> out (B,H,Tq,Dv), weights (B,H,Tq,Tk). options.scale is not used.
AttentionOutput additive_attention(
    const Var& q, const Var& k, const Var& v, const Var& w, const SdpaOptions& options = {});

}  // namespace attn::nn
