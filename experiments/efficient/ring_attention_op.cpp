// RingAttentionOp: the forward and backward ring passes of ring_attention_op.h. The tile math is
// blockwise attention's (autograd/ops/fused/blockwise_attention.cpp), with one received
// key/value block in place of one key tile: a ring step is one round of its online softmax.
#include "experiments/efficient/ring_attention_op.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "autograd/error.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/vec_math.h"

namespace attn::experiments {

static_assert(std::is_same_v<real, float>, "the communicator moves float32 blocks");

namespace {

using train::distributed::Communicator;

struct RingAttentionOp final : Op {
  Communicator* comm = nullptr;
  RingCounters* counters = nullptr;  // the caller's; must outlive backward
  Tensor o;                          // (H,Tb,Dv), shared with the result
  Tensor lse;                        // (H,Tb): L_i = log sum_j exp(s_ij) over all T keys
  int64_t heads = 0, tb = 0, d = 0, dv = 0, rows = 64;
  real scale = 1;

  int64_t tiles() const { return (tb + rows - 1) / rows; }
  int64_t kv_values() const { return heads * tb * (d + dv); }  // one key/value block

  // Folds one key/value block (kb (H,Tb,D), vb (H,Tb,Dv)) into the running max m, sum l and
  // unnormalised output acc of this rank's queries, as one round of the online softmax:
  //   m' = max(m, rowmax s);  l = l exp(m - m') + sum_j exp(s_j - m');
  //   acc = acc exp(m - m') + exp(s - m') V_block.
  void fold_block(const real* qp, const real* kb, const real* vb, real* m, real* l, real* acc) {
    kernels::parallel_for(heads * tiles(), rows * tb * (d + dv), [&](int64_t job) {
      const int64_t h = job / tiles(), r0 = (job % tiles()) * rows, br = std::min(rows, tb - r0);
      const int64_t row0 = h * tb + r0;  // first query row of this tile, over (H,Tb)
      std::vector<real> s(static_cast<size_t>(br * tb));
      kernels::gemm(false, true, br, tb, d, scale, qp + row0 * d, d, kb + h * tb * d, d, 0,
                    s.data(), tb);
      for (int64_t r = 0; r < br; ++r) {
        real* sr = s.data() + r * tb;
        const real m_new = std::max(m[row0 + r], *std::max_element(sr, sr + tb));
        const real alpha = std::exp(m[row0 + r] - m_new);  // 0 on the first block (m = -inf)
        kernels::exp_shift_row(sr, m_new, 1, 0, sr, tb);   // exp(s - m')
        real row_sum = 0;
        for (int64_t c = 0; c < tb; ++c) row_sum += sr[c];
        l[row0 + r] = l[row0 + r] * alpha + row_sum;
        m[row0 + r] = m_new;
        for (int64_t j = 0; j < dv; ++j) acc[(row0 + r) * dv + j] *= alpha;
      }
      kernels::gemm(false, false, br, dv, tb, 1, s.data(), tb, vb + h * tb * dv, dv, 1,
                    acc + row0 * dv, dv);
    });
  }

  // q (H,Tb,D), k (H,Tb,D), v (H,Tb,Dv) -> o (H,Tb,Dv): N rounds, N - 1 ring moves.
  Tensor forward(const Tensor& q, const Tensor& k, const Tensor& v) {
    const uint64_t sent_before = comm->ring_bytes_sent();
    std::vector<real> held(static_cast<size_t>(kv_values())), incoming(held.size());
    std::copy(k.data(), k.data() + k.numel(), held.begin());
    std::copy(v.data(), v.data() + v.numel(), held.begin() + k.numel());
    o = Tensor::zeros({heads, tb, dv});
    lse = Tensor::empty({heads, tb});
    std::vector<real> m(static_cast<size_t>(heads * tb), -std::numeric_limits<real>::infinity()),
        l(m.size(), 0);
    const int n = comm->size();
    for (int step = 0; step < n; ++step) {  // held: the block of rank (rank - step) mod N
      fold_block(q.data(), held.data(), held.data() + k.numel(), m.data(), l.data(), o.data());
      if (step + 1 == n) break;
      comm->ring_shift(held, incoming, fmt::format("ring attention forward, move {}", step + 1));
      held.swap(incoming);
    }
    for (int64_t i = 0; i < heads * tb; ++i) {
      for (int64_t j = 0; j < dv; ++j) o[i * dv + j] /= l[static_cast<size_t>(i)];
      lse[i] = m[static_cast<size_t>(i)] + std::log(l[static_cast<size_t>(i)]);
    }
    if (counters) counters->forward_bytes = comm->ring_bytes_sent() - sent_before;
    return o;
  }

  // One key/value block's share of the gradients, with P = exp(s - L) recomputed from the
  // saved L and D_i = dO_i . o_i:  dV_b += P^T dO,  dP = dO V_b^T,  dS = P * (dP - D),
  // dQ += scale dS K_b,  dK_b += scale dS^T Q. Parallel over heads (a head owns its dK, dV rows).
  void grad_block(const real* qp,
                  const real* g,
                  const real* row_dot,
                  const real* kb,
                  const real* vb,
                  real* dkb,
                  real* dvb,
                  real* dq) const {
    kernels::parallel_for(heads, tb * tb * 2 * (d + dv), [&](int64_t h) {
      std::vector<real> p(static_cast<size_t>(rows * tb)), dp(p.size());
      const real *kh = kb + h * tb * d, *vh = vb + h * tb * dv;
      for (int64_t r0 = 0; r0 < tb; r0 += rows) {
        const int64_t br = std::min(rows, tb - r0), row0 = h * tb + r0;
        kernels::gemm(false, true, br, tb, d, scale, qp + row0 * d, d, kh, d, 0, p.data(), tb);
        for (int64_t r = 0; r < br; ++r)
          kernels::exp_shift_row(p.data() + r * tb, lse[row0 + r], 1, 0, p.data() + r * tb, tb);
        kernels::gemm(true, false, tb, dv, br, 1, p.data(), tb, g + row0 * dv, dv, 1,
                      dvb + h * tb * dv, dv);
        kernels::gemm(false, true, br, tb, dv, 1, g + row0 * dv, dv, vh, dv, 0, dp.data(), tb);
        for (int64_t r = 0; r < br; ++r)
          for (int64_t c = 0; c < tb; ++c)
            dp[r * tb + c] = p[r * tb + c] * (dp[r * tb + c] - row_dot[row0 + r]);  // dS
        kernels::gemm(false, false, br, d, tb, scale, dp.data(), tb, kh, d, 1, dq + row0 * d, d);
        kernels::gemm(true, false, tb, d, br, scale, dp.data(), tb, qp + row0 * d, d, 1,
                      dkb + h * tb * d, d);
      }
    });
  }

  // The travelling buffer is [K | V | dK | dV]; after N rounds and N moves (the last one with
  // the gradients only) every block's gradients are back at their owner.
  void backward() override {
    const Tensor& g = dy();
    const Tensor &q = inputs[0].value(), &k = inputs[1].value(), &v = inputs[2].value();
    const uint64_t sent_before = comm->ring_bytes_sent();
    std::vector<real> row_dot(static_cast<size_t>(heads * tb), 0);
    for (int64_t i = 0; i < heads * tb; ++i)
      for (int64_t j = 0; j < dv; ++j)
        row_dot[static_cast<size_t>(i)] += g[i * dv + j] * o[i * dv + j];
    const auto kv = static_cast<size_t>(kv_values());
    std::vector<real> held(2 * kv, 0), incoming(2 * kv);
    std::copy(k.data(), k.data() + k.numel(), held.begin());
    std::copy(v.data(), v.data() + v.numel(), held.begin() + k.numel());
    Tensor dq = Tensor::zeros(q.shape());
    const int n = comm->size();
    for (int step = 0; step < n; ++step) {
      real* grads = held.data() + kv;  // dK then dV of the block held
      grad_block(q.data(), g.data(), row_dot.data(), held.data(), held.data() + k.numel(), grads,
                 grads + k.numel(), dq.data());
      const std::string what = fmt::format("ring attention backward, move {}", step + 1);
      if (step + 1 < n) {
        comm->ring_shift(held, incoming, what);
      } else {  // the last move takes the gradients home; the keys and values are there already
        comm->ring_shift(std::span<const real>(grads, kv),
                         std::span<real>(incoming.data() + kv, kv), what);
      }
      held.swap(incoming);
    }
    Tensor dk = Tensor::empty(k.shape()), dvv = Tensor::empty(v.shape());
    std::copy(held.begin() + static_cast<std::ptrdiff_t>(kv),
              held.begin() + static_cast<std::ptrdiff_t>(kv) + k.numel(), dk.data());
    std::copy(held.begin() + static_cast<std::ptrdiff_t>(kv) + k.numel(), held.end(), dvv.data());
    if (counters) counters->backward_bytes = comm->ring_bytes_sent() - sent_before;
    accumulate(0, dq);
    accumulate(1, dk);
    accumulate(2, dvv);
  }

  const char* name() const override { return "ring_attention"; }
};

}  // namespace

Var ring_attention(const Var& q,
                   const Var& k,
                   const Var& v,
                   Communicator& comm,
                   int64_t query_rows,
                   RingCounters* counters) {
  const Shape &qs = q.value().shape(), &ks = k.value().shape(), &vs = v.value().shape();
  if (qs.size() != 3 || ks.size() != 3 || vs.size() != 3 || qs != ks || vs[0] != qs[0] ||
      vs[1] != qs[1] || qs[1] == 0 || qs[2] == 0 || query_rows <= 0)
    throw Error(fmt::format(
        "ring_attention: q, k need the same shape (H,Tb,D), v (H,Tb,Dv), rows > 0: q {}, k {}, "
        "v {}, query_rows {}",
        shape_str(qs), shape_str(ks), shape_str(vs), query_rows));
  auto op = std::make_unique<RingAttentionOp>();
  op->comm = &comm;
  op->counters = counters;
  op->heads = qs[0], op->tb = qs[1], op->d = qs[2], op->dv = vs[2], op->rows = query_rows;
  op->scale = static_cast<real>(1.0 / std::sqrt(static_cast<double>(op->d)));
  Tensor y = op->forward(q.value(), k.value(), v.value());
  return record(std::move(op), {q, k, v}, std::move(y));
}

RingCounters ring_bytes_formula(
    int64_t heads, int64_t block_len, int64_t d, int64_t dv, int ranks) {
  const uint64_t block = static_cast<uint64_t>(heads * block_len * (d + dv)) * sizeof(float);
  const auto n = static_cast<uint64_t>(ranks);
  if (n == 1) return {0, 0};  // a ring of one moves nothing across a process boundary
  return {(n - 1) * block, (2 * n - 1) * block};
}

}  // namespace attn::experiments
