// The head bookkeeping shared by fused_attention's two records (ops/fused/fused_attention.cpp,
// its only user): where each head of q, k, v and of their gradients sits in a (B,T,C) tensor,
// the inputs and the weights a call computed (AttentionHeads), the weights' gradient products
// both records need, and the gradient buffers of one backward (HeadGrads).
//
//   const HeadView qv = heads.view(0);              // q's heads, read in place
//   const real* q_bh = qv.head(b, h);               // row i at q_bh + i * qv.ld
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/causal_blocks.h"

namespace attn {

// The heads of one operand (or of its gradient, T = real) inside a (B,T,C) tensor: head h of
// batch entry b is the T x width block at rows b T.., columns col + h width.., row stride
// ld = C.
template <class T>
struct Heads {
  T* base = nullptr;
  int64_t t = 0, ld = 0, col = 0, width = 0;
  T* head(int64_t b, int64_t h) const { return base + b * t * ld + col + h * width; }
};
using HeadView = Heads<const real>;
using GradView = Heads<real>;

// The head layout of one attention call and the weights it computed: filled by the forward,
// read-only afterwards, shared by the two records (FusedAttentionOp, AttentionProbsOp).
struct AttentionHeads {
  FusedAttentionSpec spec;
  std::vector<Tensor> saved;      // the inputs (shared storage, no copy)
  int view_input[3] = {0, 0, 0};  // which input q, k and v read
  int64_t b = 0, h = 0, hkv = 0, group = 1, d = 0, dv = 0;
  kernels::CausalRows tri;
  Tensor p;  // (B,H,Tq,Tk): the weights, which the derivatives need (0 where hidden)

  int64_t tq() const { return tri.rows; }
  int64_t tk() const { return tri.cols; }
  int64_t out_ld() const { return h * dv; }

  HeadView view(int which) const {
    const Tensor& x = saved[view_input[which]];
    const int64_t col = which == 0 ? spec.q_col : which == 1 ? spec.k_col : spec.v_col;
    return {x.data(), x.size(1), x.size(2), col, which == 2 ? dv : d};
  }

  void check() const {
    const char* names[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i)
      if (saved[view_input[i]].rank() != 3)
        throw Error(fmt::format("fused_attention: {} must be (B,T,C), got {}", names[i],
                                shape_str(saved[view_input[i]].shape())));
    const Tensor &q = saved[view_input[0]], &k = saved[view_input[1]], &v = saved[view_input[2]];
    const int64_t cols[3] = {spec.q_col, spec.k_col, spec.v_col};
    const int64_t widths[3] = {spec.heads * spec.head_dim, spec.kv_heads * spec.head_dim,
                               spec.kv_heads * spec.v_head_dim};
    bool ok = spec.heads > 0 && spec.kv_heads > 0 && spec.heads % spec.kv_heads == 0 &&
              spec.head_dim > 0 && spec.v_head_dim > 0 && k.size(0) == q.size(0) &&
              v.size(0) == q.size(0) && v.size(1) == k.size(1) &&
              (!spec.causal || q.size(1) <= k.size(1));
    for (int i = 0; i < 3; ++i)
      ok = ok && cols[i] >= 0 && cols[i] + widths[i] <= saved[view_input[i]].size(2);
    if (!ok)
      throw Error(fmt::format(
          "fused_attention: q {} k {} v {} do not fit heads={} kv_heads={} head_dim={} "
          "v_head_dim={} at columns q {} k {} v {} (need equal B, equal T for k and v, heads a "
          "multiple of kv_heads, each head block inside its tensor{})",
          shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape()), spec.heads,
          spec.kv_heads, spec.head_dim, spec.v_head_dim, spec.q_col, spec.k_col, spec.v_col,
          spec.causal ? ", and Tq <= Tk (causal)" : ""));
  }

  // dQ rows [r0, r1) of head `mat` from its dS rows (row i at ds + i Tk):  dQ = scale dS K.
  void query_grad(int64_t mat, int64_t r0, int64_t r1, const real* ds, const GradView& dq) const {
    const int64_t bi = mat / h, hi = mat % h, tk_ = tk();
    const HeadView kv = view(1);
    kernels::gemm({.m = r1 - r0,
                   .n = d,
                   .k = tk_,
                   .alpha = spec.scale,
                   .a = ds + r0 * tk_,
                   .lda = tk_,
                   .b = kv.head(bi, hi / group),
                   .ldb = kv.ld,
                   .c = dq.head(bi, hi) + r0 * dq.ld,
                   .ldc = dq.ld,
                   .triangle = tri.triangle(kernels::Triangle::Part::kLowerA, r0)});
  }

  // Key rows (columns of the weights) [c0, c1) of key head `kv_mat`, summed over the query heads
  // reading it:  dK = scale sum_h dS_h^T Q_h,  dV = sum_h A_h^T dO_h;  ds_of(mat) is head mat's
  // dS, a_of(mat) the weights its output mixed (P, or P o M with dropout; read only for dV),
  // dout the output's gradient (B,Tq,H*Dv) (read only for dV).
  template <class DsOf, class AOf>
  void key_value_grads(int64_t kv_mat,
                       int64_t c0,
                       int64_t c1,
                       DsOf&& ds_of,
                       AOf&& a_of,
                       const real* dout,
                       const GradView* dk,
                       const GradView* dvw) const {
    const int64_t bi = kv_mat / hkv, kh = kv_mat % hkv, tq_ = tq(), tk_ = tk();
    const HeadView qv = view(0);
    const kernels::Triangle upper = tri.triangle(kernels::Triangle::Part::kUpperA, c0);
    for (int64_t gi = 0; gi < group; ++gi) {
      const int64_t hi = kh * group + gi, mat = bi * h + hi;
      const real beta = gi == 0 ? 0 : 1;
      if (dk)
        kernels::gemm({.trans_a = true,
                       .m = c1 - c0,
                       .n = d,
                       .k = tq_,
                       .alpha = spec.scale,
                       .a = ds_of(mat) + c0,
                       .lda = tk_,
                       .b = qv.head(bi, hi),
                       .ldb = qv.ld,
                       .beta = beta,
                       .c = dk->head(bi, kh) + c0 * dk->ld,
                       .ldc = dk->ld,
                       .triangle = upper});
      if (dvw)
        kernels::gemm({.trans_a = true,
                       .m = c1 - c0,
                       .n = dv,
                       .k = tq_,
                       .a = a_of(mat) + c0,
                       .lda = tk_,
                       .b = dout + bi * tq_ * out_ld() + hi * dv,
                       .ldb = out_ld(),
                       .beta = beta,
                       .c = dvw->head(bi, kh) + c0 * dvw->ld,
                       .ldc = dvw->ld,
                       .triangle = upper});
    }
  }
};

// The gradient buffers of one backward: one per input, shared by the views that read it when
// their columns do not overlap (zeroed unless they cover every column, which the products then
// all write); a zeroed one per view otherwise (k and v reading the same columns, say), summed at
// the end. Only the views in `use` (q, k, v) that need a gradient get one.
struct HeadGrads {
  std::vector<std::optional<Tensor>> grads;
  std::optional<Tensor> per_view[3];
  GradView views[3];
  bool wanted[3] = {false, false, false};

  template <class NeedsGrad>
  HeadGrads(const AttentionHeads& s, const bool (&use)[3], NeedsGrad&& needs_grad)
      : grads(s.saved.size()) {
    for (int w = 0; w < 3; ++w) wanted[w] = use[w] && needs_grad(s.view_input[w]);
    for (size_t i = 0; i < s.saved.size(); ++i) {
      std::vector<std::pair<int64_t, int64_t>> spans;  // [col, col + width) of each view of i
      for (int w = 0; w < 3; ++w)
        if (wanted[w] && s.view_input[w] == static_cast<int>(i)) {
          const HeadView v = s.view(w);
          spans.push_back({v.col, v.col + v.width * (w == 0 ? s.h : s.hkv)});
        }
      if (spans.empty()) continue;
      std::sort(spans.begin(), spans.end());
      bool disjoint = true, covers = spans.front().first == 0;
      for (size_t k = 1; k < spans.size(); ++k) {
        disjoint = disjoint && spans[k].first >= spans[k - 1].second;
        covers = covers && spans[k].first == spans[k - 1].second;
      }
      covers = covers && disjoint && spans.back().second == s.saved[i].size(2);
      if (disjoint)
        grads[i] = covers ? Tensor::empty(s.saved[i].shape()) : Tensor::zeros(s.saved[i].shape());
      for (int w = 0; w < 3; ++w) {
        if (!wanted[w] || s.view_input[w] != static_cast<int>(i)) continue;
        if (!disjoint) per_view[w] = Tensor::zeros(s.saved[i].shape());
        Tensor& target = disjoint ? *grads[i] : *per_view[w];
        const HeadView v = s.view(w);
        views[w] = {target.data(), v.t, v.ld, v.col, v.width};
      }
    }
  }

  const GradView* view(int w) const { return wanted[w] ? &views[w] : nullptr; }

  // Hands every buffer to its input: accumulate(input index, gradient).
  template <class Accumulate>
  void hand_over(const AttentionHeads& s, Accumulate&& accumulate) const {
    for (size_t i = 0; i < grads.size(); ++i)
      if (grads[i]) accumulate(i, *grads[i]);
    for (int w = 0; w < 3; ++w)
      if (per_view[w]) accumulate(s.view_input[w], *per_view[w]);
  }
};

}  // namespace attn
