// FusedAttentionOp: multi-head attention read straight from the projections' (B,T,C) outputs and
// written straight into the (B,Tq,H*Dv) layout the output projection reads.
//
// The unfused path is head_slice (three copies into (B,H,T,D)), attention_weights (scores and
// softmax), tril_matmul (the value product) and a permute back: every op a pass over memory, and
// the (B,H,Tq,Tk) weights written by one op and read back by the next, forward and backward.
// Here one job does one head from end to end while its rows are in cache: the products read the
// heads where the projections left them (a row stride instead of a copy), and in the backward the
// weights' gradient of a head lives in a per-thread scratch block that the key and value
// gradients read while it is still in L2. Causal products skip the hidden triangle as in
// attention_weights (kernels/causal_blocks.h).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/causal_blocks.h"
#include "autograd/kernels/small_gemm.h"
#include "autograd/kernels/vec_math.h"

namespace attn {

using kernels::Triangle;

namespace {

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

// Above this many weights per thread (the scratch of one key head's query heads), the backward
// no longer fits in L2 and the per-head jobs lose their point: it takes two phases instead.
constexpr int64_t kMaxScratch = 256 * 1024;

// Per-thread buffers of the backward, each grown to the largest size asked for, then kept: a
// job's weight gradients (the fast backward's scratch) and its rows' <dO_i, O_i>.
enum class Buffer { kScores, kDots };
template <Buffer>
real* thread_buffer(int64_t n) {
  thread_local std::vector<real> buffer;
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(n);
  return buffer.data();
}

}  // namespace

struct FusedAttentionOp final : Op {
  FusedAttentionSpec spec;
  Tensor p;  // (B,H,Tq,Tk): the weights, which the derivative needs (0 where hidden)
  Tensor o;  // (B,Tq,H*Dv): the output (shared storage), for the softmax backward's dot
  std::optional<Tensor> extra_dp;  // the weights' own gradient (AttentionProbsOp), if any
  std::vector<Tensor> saved;       // the inputs (shared storage, no copy)
  int view_input[3] = {0, 0, 0};   // which input q, k and v read
  int64_t b = 0, h = 0, hkv = 0, group = 1, d = 0, dv = 0;
  kernels::CausalRows tri;

  int64_t tq() const { return tri.rows; }
  int64_t tk() const { return tri.cols; }
  int64_t out_ld() const { return h * dv; }

  HeadView view(int which) const {
    const Tensor& x = saved[view_input[which]];
    const int64_t col = which == 0 ? spec.q_col : which == 1 ? spec.k_col : spec.v_col;
    return {x.data(), x.size(1), x.size(2), col, which == 2 ? dv : d};
  }

  void check(const std::vector<const Tensor*>& qkv) {
    const char* names[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i)
      if (qkv[i]->rank() != 3)
        throw Error(fmt::format("fused_attention: {} must be (B,T,C), got {}", names[i],
                                shape_str(qkv[i]->shape())));
    const Tensor &q = *qkv[0], &k = *qkv[1], &v = *qkv[2];
    const int64_t cols[3] = {spec.q_col, spec.k_col, spec.v_col};
    const int64_t widths[3] = {spec.heads * spec.head_dim, spec.kv_heads * spec.head_dim,
                               spec.kv_heads * spec.v_head_dim};
    bool ok = spec.heads > 0 && spec.kv_heads > 0 && spec.heads % spec.kv_heads == 0 &&
              spec.head_dim > 0 && spec.v_head_dim > 0 && k.size(0) == q.size(0) &&
              v.size(0) == q.size(0) && v.size(1) == k.size(1) &&
              (!spec.causal || q.size(1) <= k.size(1));
    for (int i = 0; i < 3; ++i) ok = ok && cols[i] >= 0 && cols[i] + widths[i] <= qkv[i]->size(2);
    if (!ok)
      throw Error(fmt::format(
          "fused_attention: q {} k {} v {} do not fit heads={} kv_heads={} head_dim={} "
          "v_head_dim={} at columns q {} k {} v {} (need equal B, equal T for k and v, heads a "
          "multiple of kv_heads, each head block inside its tensor{})",
          shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape()), spec.heads,
          spec.kv_heads, spec.head_dim, spec.v_head_dim, spec.q_col, spec.k_col, spec.v_col,
          spec.causal ? ", and Tq <= Tk (causal)" : ""));
  }

  // out[b, i, h Dv + :] = sum_j p_ij v_j with p = softmax(scale q_i k_j^T) over the keys query i
  // sees (causal: j <= i + Tk - Tq; else all), q_i the row of head h, k and v of its key head
  // h / (H / Hkv).
  Tensor forward(const std::vector<Tensor>& inputs,
                 const int (&which)[3],
                 const FusedAttentionSpec& s) {
    spec = s, saved = inputs;
    std::copy(which, which + 3, view_input);
    check({&saved[which[0]], &saved[which[1]], &saved[which[2]]});
    const Tensor& q = saved[which[0]];
    const Tensor& k = saved[which[1]];
    b = q.size(0), h = spec.heads, hkv = spec.kv_heads, group = h / hkv;
    d = spec.head_dim, dv = spec.v_head_dim;
    const int64_t tq_ = q.size(1), tk_ = k.size(1);
    tri = {.rows = tq_, .cols = tk_, .diagonal = spec.causal ? tk_ - tq_ : tk_};
    p = Tensor::empty({b, h, tq_, tk_});
    Tensor out = Tensor::empty({b, tq_, h * dv});
    const HeadView qv = view(0), kv = view(1), vv = view(2);
    kernels::parallel_triangles(
        b * h, tq_, tq_ * tk_ * (d + dv), [&](int64_t mat, int64_t r0, int64_t r1) {
          const int64_t bi = mat / h, hi = mat % h;
          real* pm = p.data() + mat * tq_ * tk_;
          kernels::gemm({.trans_b = true,
                         .m = r1 - r0,
                         .n = tk_,
                         .k = d,
                         .alpha = spec.scale,
                         .a = qv.head(bi, hi) + r0 * qv.ld,
                         .lda = qv.ld,
                         .b = kv.head(bi, hi / group),
                         .ldb = kv.ld,
                         .c = pm + r0 * tk_,
                         .ldc = tk_,
                         .triangle = tri.triangle(Triangle::Part::kLowerC, r0)});
          kernels::softmax_visible_rows(tri, pm, r0, r1);
          kernels::gemm({.m = r1 - r0,
                         .n = dv,
                         .k = tk_,
                         .a = pm + r0 * tk_,
                         .lda = tk_,
                         .b = vv.head(bi, hi / group),
                         .ldb = vv.ld,
                         .c = out.data() + (bi * tq_ + r0) * out_ld() + hi * dv,
                         .ldc = out_ld(),
                         .triangle = tri.triangle(Triangle::Part::kLowerA, r0)});
        });
    o = out;
    return out;
  }

  // Rows [r0, r1) of head `mat`, with O = P V, S = scale Q K^T, P = softmax(S) (per row):
  //   dP = dO V^T (+ the weights' own gradient),  dS_i = P_i (dP_i - <P_i, dP_i>)  (softmax),
  //   dQ = scale dS K.
  // Without the weights' own gradient <P_i, dP_i> = <P_i, dO_i V^T> = <dO_i, O_i>: Dv products
  // instead of Tk, known before dP is, so small_gemm's store can write dS straight from dP's
  // tiles; else (or when the product is too big for it) one pass over each row after the product.
  // dS goes to ds (row i at ds + i Tk; its hidden part is never read).
  void backward_rows(int64_t mat, int64_t r0, int64_t r1, real* ds, const GradView* dq) const {
    const int64_t bi = mat / h, hi = mat % h, tq_ = tq(), tk_ = tk();
    const HeadView kv = view(1), vv = view(2);
    const real* dout = dy().data() + bi * tq_ * out_ld() + hi * dv;
    const real* pm = p.data() + mat * tq_ * tk_;
    auto dot_of_row = [&](int64_t i) {
      const real* dout_i = dout + i * out_ld();
      const real* o_i = o.data() + (bi * tq_ + i) * out_ld() + hi * dv;
      real dot = 0;
#pragma omp simd reduction(+ : dot)
      for (int64_t e = 0; e < dv; ++e) dot += dout_i[e] * o_i[e];
      return dot;
    };
    const kernels::GemmCall dp{.trans_b = true,
                               .m = r1 - r0,
                               .n = tk_,
                               .k = dv,
                               .a = dout + r0 * out_ld(),
                               .lda = out_ld(),
                               .b = vv.head(bi, hi / group),
                               .ldb = vv.ld,
                               .c = ds + r0 * tk_,
                               .ldc = tk_,
                               .triangle = tri.triangle(Triangle::Part::kLowerC, r0)};
    if (!extra_dp && kernels::small_gemm_fits(dp)) {
      // The dots first, then dP's tiles turn into dS before they are stored.
      real* dots = thread_buffer<Buffer::kDots>(r1 - r0);
      for (int64_t i = r0; i < r1; ++i) dots[i - r0] = dot_of_row(i);
      kernels::small_gemm(dp, {.p = pm + r0 * tk_, .ldp = tk_, .dot = dots});
    } else {
      kernels::gemm(dp);
      for (int64_t i = r0; i < r1; ++i) {
        real* row = ds + i * tk_;
        const int64_t seen = tri.visible(i), width = tri.vector_width(i);
        // The product may leave [seen, width) unwritten: p is 0 there, so dP must be (no NaN).
        std::fill(row + seen, row + width, real(0));
        if (extra_dp) {
          const real* extra = extra_dp->data() + (mat * tq_ + i) * tk_;
          for (int64_t j = 0; j < seen; ++j) row[j] += extra[j];
          kernels::softmax_backward_row(pm + i * tk_, row, row, width);
          continue;
        }
        kernels::softmax_backward_row_given(pm + i * tk_, row, row, width, dot_of_row(i));
      }
    }
    if (!dq) return;
    kernels::gemm({.m = r1 - r0,
                   .n = d,
                   .k = tk_,
                   .alpha = spec.scale,
                   .a = ds + r0 * tk_,
                   .lda = tk_,
                   .b = kv.head(bi, hi / group),
                   .ldb = kv.ld,
                   .c = dq->head(bi, hi) + r0 * dq->ld,
                   .ldc = dq->ld,
                   .triangle = tri.triangle(Triangle::Part::kLowerA, r0)});
  }

  // Key rows (columns of the weights) [c0, c1) of key head `kv_mat`, summed over the query heads
  // reading it:  dK = scale sum_h dS_h^T Q_h,  dV = sum_h P_h^T dO_h;  ds_of(mat) is head mat's
  // dS from backward_rows.
  template <class DsOf>
  void backward_cols(int64_t kv_mat,
                     int64_t c0,
                     int64_t c1,
                     DsOf&& ds_of,
                     const GradView* dk,
                     const GradView* dvw) const {
    const int64_t bi = kv_mat / hkv, kh = kv_mat % hkv, tq_ = tq(), tk_ = tk();
    const HeadView qv = view(0);
    const Triangle upper = tri.triangle(Triangle::Part::kUpperA, c0);
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
                       .a = p.data() + mat * tq_ * tk_ + c0,
                       .lda = tk_,
                       .b = dy().data() + bi * tq_ * out_ld() + hi * dv,
                       .ldb = out_ld(),
                       .beta = beta,
                       .c = dvw->head(bi, kh) + c0 * dvw->ld,
                       .ldc = dvw->ld,
                       .triangle = upper});
    }
  }

  // The gradient buffers: one per input, shared by the views that read it when their columns
  // do not overlap (zeroed unless they cover every column, which the products then all write);
  // a zeroed one per view otherwise (k and v reading the same columns, say), summed at the end.
  void backward() override {
    std::vector<std::optional<Tensor>> grads(saved.size());
    std::optional<Tensor> per_view[3];
    GradView views[3];
    bool wanted[3];
    for (int w = 0; w < 3; ++w) wanted[w] = needs_grad(view_input[w]);
    for (size_t i = 0; i < saved.size(); ++i) {
      if (!needs_grad(i)) continue;
      std::vector<std::pair<int64_t, int64_t>> spans;  // [col, col + width) of each view of i
      for (int w = 0; w < 3; ++w)
        if (view_input[w] == static_cast<int>(i)) {
          const HeadView v = view(w);
          spans.push_back({v.col, v.col + v.width * (w == 0 ? h : hkv)});
        }
      std::sort(spans.begin(), spans.end());
      bool disjoint = true, covers = spans.front().first == 0;
      for (size_t s = 1; s < spans.size(); ++s) {
        disjoint = disjoint && spans[s].first >= spans[s - 1].second;
        covers = covers && spans[s].first == spans[s - 1].second;
      }
      covers = covers && disjoint && spans.back().second == saved[i].size(2);
      if (disjoint)
        grads[i] = covers ? Tensor::empty(saved[i].shape()) : Tensor::zeros(saved[i].shape());
      for (int w = 0; w < 3; ++w) {
        if (view_input[w] != static_cast<int>(i)) continue;
        if (!disjoint) per_view[w] = Tensor::zeros(saved[i].shape());
        Tensor& target = disjoint ? *grads[i] : *per_view[w];
        const HeadView v = view(w);
        views[w] = {target.data(), v.t, v.ld, v.col, v.width};
      }
    }
    const GradView* dq = wanted[0] ? &views[0] : nullptr;
    const GradView* dk = wanted[1] ? &views[1] : nullptr;
    const GradView* dvw = wanted[2] ? &views[2] : nullptr;
    run_backward(dq, dk, dvw);
    extra_dp.reset();
    for (size_t i = 0; i < saved.size(); ++i)
      if (grads[i]) accumulate(i, *grads[i]);
    for (int w = 0; w < 3; ++w)
      if (per_view[w]) accumulate(view_input[w], *per_view[w]);
  }

  // One job per key head and batch entry, each doing its query heads' rows and then its keys,
  // the weights' gradient in a per-thread scratch while it is in cache, when there are enough
  // such jobs for the threads and the scratch fits in L2; else the rows of every head in
  // parallel into a full dS, then the keys of every key head (two passes, any size).
  void run_backward(const GradView* dq, const GradView* dk, const GradView* dvw) const {
    const int64_t tq_ = tq(), tk_ = tk(), per_head = tq_ * tk_;
    const int64_t kv_jobs = b * hkv, work = group * per_head * (2 * d + 2 * dv);
    const bool need_cols = dk || dvw;
    if (kv_jobs >= 2 * num_threads() && group * per_head <= kMaxScratch) {
      kernels::parallel_for(kv_jobs, work, [&](int64_t kv_mat) {
        real* scratch = thread_buffer<Buffer::kScores>(group * per_head);
        const int64_t first = (kv_mat / hkv) * h + (kv_mat % hkv) * group;
        for (int64_t gi = 0; gi < group; ++gi)
          backward_rows(first + gi, 0, tq_, scratch + gi * per_head, dq);
        if (need_cols)
          backward_cols(
              kv_mat, 0, tk_, [&](int64_t mat) { return scratch + (mat - first) * per_head; }, dk,
              dvw);
      });
      return;
    }
    Tensor ds = Tensor::empty({b * h, tq_, tk_});
    kernels::parallel_triangles(b * h, tq_, per_head * (d + dv),
                                [&](int64_t mat, int64_t r0, int64_t r1) {
                                  backward_rows(mat, r0, r1, ds.data() + mat * per_head, dq);
                                });
    if (!need_cols) return;
    kernels::parallel_triangles(
        kv_jobs, tk_, group * per_head * (d + dv), [&](int64_t kv_mat, int64_t c0, int64_t c1) {
          backward_cols(
              kv_mat, c0, c1, [&](int64_t mat) { return ds.data() + mat * per_head; }, dk, dvw);
        });
  }

  const char* name() const override {
    return "fused_attention";
  }
};

// The weights (B,H,Tq,Tk) as a Var of their own, for plots and for losses on them. Its input is
// the attention's output only to place it after the attention on the tape: its backward hands
// the weights' gradient to the attention op (run next, in reverse order), which adds it to dP,
// and gives the output a zero gradient so that the attention's backward runs even when nothing
// else reached it.
struct AttentionProbsOp final : Op {
  FusedAttentionOp* attention = nullptr;  // owned by the tape, recorded just before this op

  void backward() override {
    if (attention->extra_dp)
      *attention->extra_dp += dy();
    else
      attention->extra_dp = dy().clone();
    // The output's consumers ran before this op (they were recorded after it): a missing
    // gradient now means none will come.
    if (!inputs[0].has_grad()) accumulate(0, Tensor::zeros(inputs[0].shape()));
  }

  const char* name() const override { return "attention_probs"; }
};

FusedAttentionOutput fused_attention(const Var& q,
                                     const Var& k,
                                     const Var& v,
                                     const FusedAttentionSpec& spec) {
  // One input per distinct tensor: q, k and v are often column blocks of one projection.
  std::vector<Var> inputs{q};
  int which[3] = {0, 0, 0};
  auto index_of = [&](const Var& x) {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].same_node(x)) return static_cast<int>(i);
    inputs.push_back(x);
    return static_cast<int>(inputs.size() - 1);
  };
  which[1] = index_of(k), which[2] = index_of(v);
  std::vector<Tensor> values;
  for (const Var& x : inputs) values.push_back(x.value());
  auto op = std::make_unique<FusedAttentionOp>();
  FusedAttentionOp* raw = op.get();
  Tensor out_value = op->forward(values, which, spec);
  Tensor weights = op->p;
  Var out = record(std::move(op), std::move(inputs), std::move(out_value));
  if (!out.requires_grad()) return {out, Var(weights, false)};
  auto probs = std::make_unique<AttentionProbsOp>();
  probs->attention = raw;
  return {out, record(std::move(probs), {out}, std::move(weights))};
}

}  // namespace attn
