// FusedAttentionOp: multi-head attention read straight from the projections' (B,T,C) outputs and
// written straight into the (B,Tq,H*Dv) layout the output projection reads.
//
// Replaces (reference path, autograd/mode.h, nn/attention/sdpa.cpp): head_slice (q, k, v) ->
// matmul(Q, K^T) -> mul_scalar(1/sqrt(D)) -> [masked_fill, causal] -> softmax -> matmul(A, V)
// -> permute + reshape (the head merge): about ten ops, each a pass over memory, and the
// (B,H,Tq,Tk) weights written by one op and read back by the next, forward and backward.
// Here one job does one head from end to end while its rows are in cache: the products read the
// heads where the projections left them (a row stride instead of a copy), and in the backward the
// weights' gradient of a head lives in a per-thread scratch block that the key and value
// gradients read while it is still in L2. Causal products skip the hidden triangle as in
// attention_weights (kernels/causal_blocks.h).
// Measured: W4's train step 0.96 and W1's 0.98 of the time before (against attention_weights +
// tril_matmul, themselves faster than the elementary ops; docs/performance.md,
// "`fused_attention`").
// Dropout of the weights (fused_dropout.h) replaces the dropout op between softmax and the
// value product: the mask is drawn per row block from Philox as dropout(weights) draws it
// (kernels/dropout_mask.h) and regenerated in backward, never stored; a causal row draws only
// the keys it sees (docs/performance.md, "Dropout inside the fused ops").
//
// Two records: fused_attention (out) and attention_probs (the weights as a Var of their own, for
// plots and losses on them). Each owns its backward: the weights' gradient goes through
// AttentionProbsOp's own softmax and score backward into q and k; neither writes into the other.
// What both read (the inputs, the weights P, the head layout) is one read-only AttentionHeads.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/causal_blocks.h"
#include "autograd/kernels/dropout_mask.h"
#include "autograd/kernels/small_gemm.h"
#include "autograd/kernels/vec_math.h"
#include "autograd/ops/fused/fused_attention_heads.h"
#include "autograd/ops/fused/fused_dropout.h"

namespace attn {

using kernels::Triangle;

namespace {

// Above this many weights per thread (the scratch of one key head's query heads), the backward
// no longer fits in L2 and the per-head jobs lose their point: it takes two phases instead.
constexpr int64_t kMaxScratch = 256 * 1024;

// Per-thread buffers, each grown to the largest size asked for, then kept: a job's weight
// gradients (the fast backward's scratch), its rows' <dO_i, O_i>, and its dropped weights
// (with dropout: the forward's rows, the fast backward's heads).
enum class Buffer { kScores, kDots, kDropped };
template <Buffer>
real* thread_buffer(int64_t n) {
  thread_local std::vector<real> buffer;
  if (static_cast<int64_t>(buffer.size()) < n) buffer.resize(n);
  return buffer.data();
}

}  // namespace

struct FusedAttentionOp final : Op {
  std::shared_ptr<AttentionHeads> heads;     // shared with the attention_probs record
  Tensor o;                                  // (B,Tq,H*Dv): the output, for the softmax dots
  std::optional<kernels::DropoutMask> drop;  // the weights' dropout mask M, if any

  // out[b, i, h Dv + :] = sum_j a_ij v_j with a = p (or p o M with dropout) and
  // p = softmax(scale q_i k_j^T) over the keys query i sees (causal: j <= i + Tk - Tq; else all),
  // q_i the row of head h, k and v of its key head h / (H / Hkv).
  Tensor forward(const std::vector<Tensor>& inputs,
                 const int (&which)[3],
                 const FusedAttentionSpec& spec) {
    heads = std::make_shared<AttentionHeads>();
    AttentionHeads& s = *heads;
    s.spec = spec, s.saved = inputs;
    std::copy(which, which + 3, s.view_input);
    s.check();
    const Tensor& q = s.saved[which[0]];
    const Tensor& k = s.saved[which[1]];
    s.b = q.size(0), s.h = spec.heads, s.hkv = spec.kv_heads, s.group = s.h / s.hkv;
    s.d = spec.head_dim, s.dv = spec.v_head_dim;
    const int64_t tq_ = q.size(1), tk_ = k.size(1), h = s.h, d = s.d, dv = s.dv, group = s.group;
    s.tri = {.rows = tq_, .cols = tk_, .diagonal = spec.causal ? tk_ - tq_ : tk_};
    s.p = Tensor::empty({s.b, h, tq_, tk_});
    Tensor out = Tensor::empty({s.b, tq_, h * dv});
    const HeadView qv = s.view(0), kv = s.view(1), vv = s.view(2);
    kernels::parallel_triangles(
        s.b * h, tq_, tq_ * tk_ * (d + dv), [&](int64_t mat, int64_t r0, int64_t r1) {
          const int64_t bi = mat / h, hi = mat % h;
          real* pm = s.p.data() + mat * tq_ * tk_;
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
                         .triangle = s.tri.triangle(Triangle::Part::kLowerC, r0)});
          kernels::softmax_visible_rows(s.tri, pm, r0, r1);
          const real* a = pm + r0 * tk_;  // the weights the values are mixed with
          if (drop) {
            real* dropped = thread_buffer<Buffer::kDropped>((r1 - r0) * tk_);
            drop_rows(mat, r0, r1, dropped);
            a = dropped;
          }
          kernels::gemm({.m = r1 - r0,
                         .n = dv,
                         .k = tk_,
                         .a = a,
                         .lda = tk_,
                         .b = vv.head(bi, hi / group),
                         .ldb = vv.ld,
                         .c = out.data() + (bi * tq_ + r0) * s.out_ld() + hi * dv,
                         .ldc = s.out_ld(),
                         .triangle = s.tri.triangle(Triangle::Part::kLowerA, r0)});
        });
    o = out;
    return out;
  }

  // Rows [r0, r1) of head mat's dropped weights A = P o M into a (row i at a + (i - r0) Tk). Row
  // i's mask words are those of its flat indices in the (B,H,Tq,Tk) weights, (mat Tq + i) Tk + j,
  // as dropout(weights) draws them; only the visible(i) keys it sees are drawn, and A is 0 from
  // there to the row's vector width, as P.
  void drop_rows(int64_t mat, int64_t r0, int64_t r1, real* a) const {
    const AttentionHeads& s = *heads;
    const int64_t tq_ = s.tq(), tk_ = s.tk();
    const real* pm = s.p.data() + mat * tq_ * tk_;
    for (int64_t i = r0; i < r1; ++i) {
      real* row = a + (i - r0) * tk_;
      const int64_t seen = s.tri.visible(i);
      drop->apply((mat * tq_ + i) * tk_, seen, pm + i * tk_, row);
      std::fill(row + seen, row + s.tri.vector_width(i), real(0));
    }
  }

  // Rows [r0, r1) of head `mat`, with O = P V, S = scale Q K^T, P = softmax(S) (per row):
  //   dP = dO V^T,  dS_i = P_i (dP_i - <P_i, dP_i>)  (softmax),  dQ = scale dS K.
  // <P_i, dP_i> = <P_i, dO_i V^T> = <dO_i, O_i>: Dv products instead of Tk, known before dP is,
  // so small_gemm's store can write dS straight from dP's tiles; else (when the product is too
  // big for it) one pass over each row after the product.
  // dS goes to ds (row i at ds + i Tk; its hidden part is never read).
  // With dropout (O = A V, A = P o M): dA = dO V^T, dP = M o dA, and still <P_i, dP_i> =
  // <A_i, dA_i> = <dO_i, O_i>, so dS_i = A_i o dA_i - <dO_i, O_i> P_i, one pass over the row after
  // the product; A (the mask regenerated) goes to a (row i at a + i Tk) for dV = A^T dO.
  void backward_rows(
      int64_t mat, int64_t r0, int64_t r1, real* ds, real* a, const GradView* dq) const {
    const AttentionHeads& s = *heads;
    const int64_t bi = mat / s.h, hi = mat % s.h, tq_ = s.tq(), tk_ = s.tk(), dv = s.dv;
    const HeadView vv = s.view(2);
    const real* dout = dy().data() + bi * tq_ * s.out_ld() + hi * dv;
    const real* pm = s.p.data() + mat * tq_ * tk_;
    auto dot_of_row = [&](int64_t i) {
      const real* dout_i = dout + i * s.out_ld();
      const real* o_i = o.data() + (bi * tq_ + i) * s.out_ld() + hi * dv;
      real dot = 0;
#pragma omp simd reduction(+ : dot)
      for (int64_t e = 0; e < dv; ++e) dot += dout_i[e] * o_i[e];
      return dot;
    };
    const kernels::GemmCall dp{.trans_b = true,
                               .m = r1 - r0,
                               .n = tk_,
                               .k = dv,
                               .a = dout + r0 * s.out_ld(),
                               .lda = s.out_ld(),
                               .b = vv.head(bi, hi / s.group),
                               .ldb = vv.ld,
                               .c = ds + r0 * tk_,
                               .ldc = tk_,
                               .triangle = s.tri.triangle(Triangle::Part::kLowerC, r0)};
    if (drop) {
      drop_rows(mat, r0, r1, a + r0 * tk_);
      kernels::gemm(dp);
      for (int64_t i = r0; i < r1; ++i) {
        real* row = ds + i * tk_;
        const real *p_i = pm + i * tk_, *a_i = a + i * tk_;
        const real dot = dot_of_row(i);
        const int64_t seen = s.tri.visible(i);
#pragma omp simd
        for (int64_t j = 0; j < seen; ++j) row[j] = a_i[j] * row[j] - dot * p_i[j];
        std::fill(row + seen, row + s.tri.vector_width(i), real(0));
      }
    } else if (kernels::small_gemm_fits(dp)) {
      // The dots first, then dP's tiles turn into dS before they are stored.
      real* dots = thread_buffer<Buffer::kDots>(r1 - r0);
      for (int64_t i = r0; i < r1; ++i) dots[i - r0] = dot_of_row(i);
      kernels::small_gemm(dp, {.p = pm + r0 * tk_, .ldp = tk_, .dot = dots});
    } else {
      kernels::gemm(dp);
      for (int64_t i = r0; i < r1; ++i) {
        real* row = ds + i * tk_;
        const int64_t seen = s.tri.visible(i), width = s.tri.vector_width(i);
        // The product may leave [seen, width) unwritten: p is 0 there, so dP must be (no NaN).
        std::fill(row + seen, row + width, real(0));
        kernels::softmax_backward_row_given(pm + i * tk_, row, row, width, dot_of_row(i));
      }
    }
    if (dq) s.query_grad(mat, r0, r1, ds, *dq);
  }

  void backward() override {
    const bool use[3] = {true, true, true};
    HeadGrads g(*heads, use, [&](int i) { return needs_grad(i); });
    run_backward(g.view(0), g.view(1), g.view(2));
    g.hand_over(*heads, [&](size_t i, const Tensor& d) { accumulate(i, d); });
  }

  // One job per key head and batch entry, each doing its query heads' rows and then its keys,
  // the weights' gradient in a per-thread scratch while it is in cache, when there are enough
  // such jobs for kSplitThreads threads and the scratch fits in L2; else the rows of every head
  // in parallel into a full dS, then the keys of every key head (two passes, any size). The
  // two ways split the sums differently, so the choice is by the shapes, never by
  // num_threads(): the bits are the same at any thread count (issue 32).
  void run_backward(const GradView* dq, const GradView* dk, const GradView* dvw) const {
    const AttentionHeads& s = *heads;
    const int64_t tq_ = s.tq(), tk_ = s.tk(), per_head = tq_ * tk_, h = s.h, group = s.group;
    const int64_t kv_jobs = s.b * s.hkv, work = group * per_head * (2 * s.d + 2 * s.dv);
    const bool need_cols = dk || dvw;
    const real* dout = dy().data();
    if (kv_jobs >= 2 * kernels::kSplitThreads && group * per_head <= kMaxScratch) {
      kernels::parallel_for(kv_jobs, work, [&](int64_t kv_mat) {
        real* scratch = thread_buffer<Buffer::kScores>(group * per_head);
        real* dropped = drop ? thread_buffer<Buffer::kDropped>(group * per_head) : nullptr;
        const int64_t first = (kv_mat / s.hkv) * h + (kv_mat % s.hkv) * group;
        for (int64_t gi = 0; gi < group; ++gi)
          backward_rows(first + gi, 0, tq_, scratch + gi * per_head,
                        dropped ? dropped + gi * per_head : nullptr, dq);
        auto a_of = [&](int64_t mat) {
          return dropped ? dropped + (mat - first) * per_head : s.p.data() + mat * per_head;
        };
        if (need_cols)
          s.key_value_grads(
              kv_mat, 0, tk_, [&](int64_t mat) { return scratch + (mat - first) * per_head; }, a_of,
              dout, dk, dvw);
      });
      return;
    }
    Tensor ds = Tensor::empty({s.b * h, tq_, tk_});
    Tensor dropped = drop ? Tensor::empty({s.b * h, tq_, tk_}) : s.p;  // A: P o M, or P
    real* a = drop ? dropped.data() : nullptr;
    kernels::parallel_triangles(s.b * h, tq_, per_head * (s.d + s.dv),
                                [&](int64_t mat, int64_t r0, int64_t r1) {
                                  backward_rows(mat, r0, r1, ds.data() + mat * per_head,
                                                a ? a + mat * per_head : nullptr, dq);
                                });
    if (!need_cols) return;
    kernels::parallel_triangles(
        kv_jobs, tk_, group * per_head * (s.d + s.dv), [&](int64_t kv_mat, int64_t c0, int64_t c1) {
          s.key_value_grads(
              kv_mat, c0, c1, [&](int64_t mat) { return ds.data() + mat * per_head; },
              [&](int64_t mat) { return dropped.data() + mat * per_head; }, dout, dk, dvw);
        });
  }

  const char* name() const override {
    return "fused_attention";
  }
};

// The weights P (B,H,Tq,Tk) as a Var of their own, for plots and for losses on them. Its inputs
// are the attention's (q, k, v; v gets nothing from it) and its backward is P's own derivative:
//   dS_i = P_i (dP_i - <P_i, dP_i>)  (softmax),  dQ = scale dS K,  dK = scale dS^T Q,
// with dP = this record's output gradient. In training nothing reads the weights' gradient, the
// record gets none and its backward never runs: the attention's own backward stays the fast one.
struct AttentionProbsOp final : Op {
  std::shared_ptr<const AttentionHeads> heads;  // the attention's inputs and weights (read only)

  void backward() override {
    const AttentionHeads& s = *heads;
    const bool use[3] = {true, true, false};
    HeadGrads g(s, use, [&](int i) { return needs_grad(i); });
    if (!g.view(0) && !g.view(1)) return;  // only v needs a gradient, and P does not depend on v
    const int64_t tq_ = s.tq(), tk_ = s.tk(), per_head = tq_ * tk_;
    Tensor ds = Tensor::empty({s.b * s.h, tq_, tk_});
    const GradView* dq = g.view(0);
    kernels::parallel_triangles(
        s.b * s.h, tq_, per_head * (s.d + 3), [&](int64_t mat, int64_t r0, int64_t r1) {
          const real* pm = s.p.data() + mat * per_head;
          const real* dp = dy().data() + mat * per_head;
          real* dsm = ds.data() + mat * per_head;
          for (int64_t i = r0; i < r1; ++i) {
            const int64_t seen = s.tri.visible(i), width = s.tri.vector_width(i);
            std::copy(dp + i * tk_, dp + i * tk_ + seen, dsm + i * tk_);
            std::fill(dsm + i * tk_ + seen, dsm + i * tk_ + width, real(0));  // P is 0 there
            kernels::softmax_backward_row(pm + i * tk_, dsm + i * tk_, dsm + i * tk_, width);
          }
          if (dq) s.query_grad(mat, r0, r1, dsm, *dq);
        });
    if (const GradView* dk = g.view(1))
      kernels::parallel_triangles(
          s.b * s.hkv, tk_, s.group * per_head * s.d, [&](int64_t kv_mat, int64_t c0, int64_t c1) {
            s.key_value_grads(
                kv_mat, c0, c1, [&](int64_t mat) { return ds.data() + mat * per_head; },
                [&](int64_t mat) { return s.p.data() + mat * per_head; }, nullptr, dk, nullptr);
          });
    g.hand_over(s, [&](size_t i, const Tensor& d) { accumulate(i, d); });
  }

  const char* name() const override { return "attention_probs"; }
};

FusedAttentionOutput fused_attention(const Var& q,
                                     const Var& k,
                                     const Var& v,
                                     const FusedAttentionSpec& spec) {
  return fused_attention(q, k, v, spec, FusedDropout{});
}

FusedAttentionOutput fused_attention(const Var& q,
                                     const Var& k,
                                     const Var& v,
                                     const FusedAttentionSpec& spec,
                                     const FusedDropout& dropout) {
  check_fused_dropout("fused_attention", dropout);
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
  // One draw, where dropout(weights, p, gen) would make it: the same mask as the reference path.
  if (dropout.p > 0) op->drop = kernels::DropoutMask::make(dropout.gen->next_u64(), dropout.p);
  Tensor out_value = op->forward(values, which, spec);
  std::shared_ptr<const AttentionHeads> heads = op->heads;
  Var out = record(std::move(op), inputs, std::move(out_value));
  if (!out.requires_grad()) return {out, Var(heads->p, false)};
  auto probs = std::make_unique<AttentionProbsOp>();
  probs->heads = heads;
  Tensor weights = heads->p;
  return {out, record(std::move(probs), std::move(inputs), std::move(weights))};
}

}  // namespace attn
