// BlockwiseAttentionOp: softmax(q k^T * scale) v without ever holding the Tq x Tk score matrix.
//
// The scores are produced one (block x block) tile at a time. Forward keeps, per query row, the
// running max m and the running sum l of exp(s - m) (the "online softmax"): when a new tile
// raises the max to m', what was accumulated so far is rescaled by exp(m - m'). Only the output
// o and one number per row, the log-sum-exp L = m + log l, are saved. Backward recomputes each
// tile's probabilities exactly as P = exp(s - L) and never needs the softmax normaliser again.
// Extra memory: O(Tq) for L and the row dots D, plus O(block^2) scratch per thread.
//
// Replaces: matmul(q, k^T) -> mul_scalar -> masked_fill (causal) -> softmax -> matmul, computed
// without the (Tq,Tk) matrices. Its gain is memory, not time: W5 in docs/performance.md (peak
// memory growing like T instead of T^2). The layers built on it (nn::BlockwiseAttention, llama's
// blockwise option) keep it in reference mode too, since the algorithm is what they show; its
// test against the composition is tests/nn/attention_variants_test.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/blas.h"
#include "autograd/kernels/parallel.h"
#include "autograd/kernels/vec_math.h"

namespace attn {

namespace {
constexpr real kNegInf = -std::numeric_limits<real>::infinity();
// The backward's least number of jobs, from key heads and ranges of their key blocks: enough
// for kSplitThreads threads to share evenly; a constant, so the split is the same at any thread
// count.
constexpr int64_t kBackwardJobs = 2 * kernels::kSplitThreads;
}  // namespace

struct BlockwiseAttentionOp final : Op {
  Tensor q, k, v;  // the inputs (shared storage, no copy)
  Tensor o;        // the output, shared with the result Var
  Tensor lse;      // (batch, Tq): L_i = log sum_j exp(s_ij), the only other thing saved
  int64_t batch = 1, group = 1, tq = 0, tk = 0, d = 0, dv = 0, block = 64;
  int64_t offset = 0;  // causal: query i is position i + offset, offset = Tk - Tq
  bool causal = false;
  real scale = 1;

  // One tile of scores s = scale * Q[qb:qb+br] K[kb:kb+bc]^T into s (br,bc); causally hidden
  // entries (key after the query's position) become -inf.
  void score_tile(const real* qp,
                  const real* kp,
                  int64_t qb,
                  int64_t br,
                  int64_t kb,
                  int64_t bc,
                  real* s) const {
    kernels::gemm(false, true, br, bc, d, scale, qp + qb * d, d, kp + kb * d, d, 0, s, bc);
    if (!causal || kb + bc - 1 <= qb + offset) return;  // tile entirely on or below the diagonal
    for (int64_t r = 0; r < br; ++r)
      for (int64_t c = std::max<int64_t>(0, qb + r + offset - kb + 1); c < bc; ++c)
        s[r * bc + c] = kNegInf;
  }
  // Keys a query block can see: all of them, or (causal) those up to its last row's position.
  int64_t key_end(int64_t qb, int64_t br) const {
    return causal ? std::min(tk, qb + br + offset) : tk;
  }

  // q (...,Tq,D), k (...,Tk,D), v (...,Tk,Dv) -> o (...,Tq,Dv)
  //   o_i = sum_j p_ij v_j,  p_ij = exp(s_ij - L_i),  s_ij = scale q_i.k_j (-inf if hidden)
  // computed per query block as: for each key tile, m' = max(m, rowmax s);
  //   l = l exp(m - m') + sum_j exp(s_j - m');  acc = acc exp(m - m') + exp(s - m') V_tile;
  // finally o = acc / l and L = m + log l.
  Tensor forward(const Tensor& q_in,
                 const Tensor& k_in,
                 const Tensor& v_in,
                 bool is_causal,
                 int64_t block_size,
                 real scale_in) {
    q = q_in, k = k_in, v = v_in, causal = is_causal, block = block_size;
    check_shapes();
    scale = scale_in != 0 ? scale_in : static_cast<real>(1.0 / std::sqrt(static_cast<double>(d)));
    Shape out_shape = q.shape();
    out_shape.back() = dv;
    o = Tensor::zeros(out_shape);
    lse = Tensor::empty({batch, tq});
    const int64_t nqb = (tq + block - 1) / block;
    // Query blocks are independent: parallel over (batch entry, query block).
    kernels::parallel_for(batch * nqb, block * tk * (d + dv), [&](int64_t job) {
      const int64_t bi = job / nqb, qb = (job % nqb) * block, br = std::min(block, tq - qb);
      const real* qp = q.data() + bi * tq * d;
      const real* kp = k.data() + (bi / group) * tk * d;  // GQA: `group` query heads per kv head
      const real* vp = v.data() + (bi / group) * tk * dv;
      real* acc = o.data() + (bi * tq + qb) * dv;
      std::vector<real> s(static_cast<size_t>(br * block)), m(br, kNegInf), l(br, 0);
      const int64_t kend = key_end(qb, br);
      for (int64_t kb = 0; kb < kend; kb += block) {
        const int64_t bc = std::min(block, kend - kb);
        score_tile(qp, kp, qb, br, kb, bc, s.data());
        for (int64_t r = 0; r < br; ++r) {
          real* sr = s.data() + r * bc;
          const real m_new = std::max(m[r], *std::max_element(sr, sr + bc));
          if (m_new == kNegInf) continue;  // nothing visible yet in this row
          const real alpha = std::exp(m[r] - m_new);
          kernels::exp_shift_row(sr, m_new, 1, 0, sr, bc);  // vectorised exp(s - m')
          real row_sum = 0;
          for (int64_t c = 0; c < bc; ++c) row_sum += sr[c];
          l[r] = l[r] * alpha + row_sum;
          m[r] = m_new;
          if (alpha != 1)
            for (int64_t j = 0; j < dv; ++j) acc[r * dv + j] *= alpha;
        }
        kernels::gemm(false, false, br, dv, bc, 1, s.data(), bc, vp + kb * dv, dv, 1, acc, dv);
      }
      for (int64_t r = 0; r < br; ++r) {
        const real inv = 1 / l[r];
        for (int64_t j = 0; j < dv; ++j) acc[r * dv + j] *= inv;
        lse[bi * tq + qb + r] = m[r] + std::log(l[r]);
      }
    });
    return o;
  }

  // With P the probabilities, D_i = sum_j p_ij (dO_i . v_j) = dO_i . o_i (one dot per row):
  //   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - D),  dQ = scale dS K,  dK = scale dS^T Q,
  // all tile by tile; P is recomputed from L, so no Tq x Tk matrix exists here either.
  // Parallel over key/value heads: the `group` query heads sharing one add into its dK, dV.
  // With fewer than kBackwardJobs heads (W5: one head), each head's key blocks are also split
  // into `chunks` contiguous ranges, one job each: a job owns the dK, dV rows of its key blocks,
  // and adds its share of dQ into its own buffer (O(Tq D) each); the buffers are summed in chunk
  // order at the end. The split depends on the shapes only, never on the thread count, so
  // neither do the bits (issue 32). Jobs take the ranges first, last, second, second to last...:
  // with a causal mask the early keys are seen by more queries, and a thread's run of
  // consecutive jobs then gets an even share of the work.
  void backward() override {
    const Tensor& g = dy();
    Tensor dq = Tensor::zeros(q.shape()), dk = Tensor::zeros(k.shape()),
           dvv = Tensor::zeros(v.shape());
    const int64_t kv_heads = batch / group, key_blocks = (tk + block - 1) / block;
    const int64_t chunks = std::clamp<int64_t>((kBackwardJobs + kv_heads - 1) / kv_heads, 1,
                                               std::max<int64_t>(key_blocks, 1));
    std::vector<Tensor> dq_more;  // chunk c > 0 adds its dQ here, chunk 0 into dq
    for (int64_t c = 1; c < chunks; ++c) dq_more.push_back(Tensor::zeros(q.shape()));
    kernels::parallel_for(
        kv_heads * chunks, group * tq * tk * (2 * d + 2 * dv) / chunks, [&](int64_t job) {
          const int64_t kvi = job / chunks, j = job % chunks;
          const int64_t chunk = j % 2 == 0 ? j / 2 : chunks - 1 - j / 2;
          const int64_t kb_begin = chunk * key_blocks / chunks * block;
          const int64_t kb_end = std::min(tk, (chunk + 1) * key_blocks / chunks * block);
          real* dq_base = chunk == 0 ? dq.data() : dq_more[chunk - 1].data();
          const real* kp = k.data() + kvi * tk * d;
          const real* vp = v.data() + kvi * tk * dv;
          real* dkp = dk.data() + kvi * tk * d;
          real* dvp = dvv.data() + kvi * tk * dv;
          std::vector<real> row_dot(static_cast<size_t>(tq));
          std::vector<real> p(static_cast<size_t>(block * block)), dp(p.size());
          for (int64_t bi = kvi * group; bi < (kvi + 1) * group; ++bi) {
            const real* qp = q.data() + bi * tq * d;
            const real* gp = g.data() + bi * tq * dv;
            const real* lp = lse.data() + bi * tq;
            real* dqp = dq_base + bi * tq * d;
            for (int64_t i = 0; i < tq; ++i) {
              const real* oi = o.data() + (bi * tq + i) * dv;
              real acc = 0;
              for (int64_t j = 0; j < dv; ++j) acc += gp[i * dv + j] * oi[j];
              row_dot[i] = acc;
            }
            for (int64_t kb = kb_begin; kb < kb_end; kb += block) {
              const int64_t bc = std::min(block, tk - kb);
              for (int64_t qb = 0; qb < tq; qb += block) {
                const int64_t br = std::min(block, tq - qb);
                if (causal && qb + br - 1 + offset < kb) continue;  // this key tile is all future
                score_tile(qp, kp, qb, br, kb, bc, p.data());
                for (int64_t r = 0; r < br; ++r)  // P = exp(s - L), vectorised; -inf -> 0
                  kernels::exp_shift_row(p.data() + r * bc, lp[qb + r], 1, 0, p.data() + r * bc,
                                         bc);
                // dV_tile += P^T dO_rows;  dP = dO_rows V_tile^T
                kernels::gemm(true, false, bc, dv, br, 1, p.data(), bc, gp + qb * dv, dv, 1,
                              dvp + kb * dv, dv);
                kernels::gemm(false, true, br, bc, dv, 1, gp + qb * dv, dv, vp + kb * dv, dv, 0,
                              dp.data(), bc);
                for (int64_t r = 0; r < br; ++r)
                  for (int64_t c = 0; c < bc; ++c)
                    dp[r * bc + c] = p[r * bc + c] * (dp[r * bc + c] - row_dot[qb + r]);  // dS
                // dQ_rows += scale dS K_tile;  dK_tile += scale dS^T Q_rows
                kernels::gemm(false, false, br, d, bc, scale, dp.data(), bc, kp + kb * d, d, 1,
                              dqp + qb * d, d);
                kernels::gemm(true, false, bc, d, br, scale, dp.data(), bc, qp + qb * d, d, 1,
                              dkp + kb * d, d);
              }
            }
          }
        });
    for (const Tensor& part : dq_more) dq += part;
    accumulate(0, dq);
    accumulate(1, dk);
    accumulate(2, dvv);
  }

  const char* name() const override { return "blockwise_attention"; }

 private:
  void check_shapes() {
    const Shape &qs = q.shape(), &ks = k.shape(), &vs = v.shape();
    auto fail = [&](const std::string& why) {
      return Error(fmt::format("blockwise_attention: {}: q {}, k {}, v {}", why, shape_str(qs),
                               shape_str(ks), shape_str(vs)));
    };
    const size_t r = qs.size();
    if (r < 2 || ks.size() != r || vs.size() != r) throw fail("q, k, v need the same rank >= 2");
    if (!std::equal(ks.begin(), ks.end() - 2, vs.begin())) throw fail("k and v batch axes differ");
    // Leading axes match, except that the head axis (-3) of q may be a multiple of k's (GQA).
    for (size_t i = 0; i + 3 < r; ++i)
      if (qs[i] != ks[i]) throw fail("leading (batch) axes must match");
    if (r >= 3) {
      if (ks[r - 3] == 0 || qs[r - 3] % ks[r - 3] != 0)
        throw fail("q's heads must be a multiple of k's heads");
      group = qs[r - 3] / ks[r - 3];
    }
    tq = qs[r - 2], d = qs.back(), tk = ks[r - 2], dv = vs.back();
    if (ks.back() != d) throw fail("q and k need the same last axis");
    if (vs[r - 2] != tk) throw fail("k and v need the same number of positions");
    if (tq == 0 || tk == 0 || d == 0) throw fail("empty attention");
    if (causal && tq > tk) throw fail("causal needs Tq <= Tk");
    if (block <= 0) throw fail(fmt::format("block_size must be positive, got {}", block));
    offset = tk - tq;
    batch = q.numel() / (tq * d);
  }
};

Var blockwise_attention(
    const Var& q, const Var& k, const Var& v, bool causal, int64_t block_size, real scale) {
  auto op = std::make_unique<BlockwiseAttentionOp>();
  Tensor y = op->forward(q.value(), k.value(), v.value(), causal, block_size, scale);
  return record(std::move(op), {q, k, v}, std::move(y));
}

}  // namespace attn
