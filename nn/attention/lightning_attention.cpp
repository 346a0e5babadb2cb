#include "nn/attention/lightning_attention.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "nn/attention/linear_attention.h"

namespace attn::nn {

namespace {

// (n,n) with 1 above the diagonal: key j > query i is hidden inside a block.
Tensor above_diagonal(int64_t n) {
  Tensor hide({n, n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) hide[i * n + j] = 1;
  return hide;
}

}  // namespace

Var lightning_attention(const Var& q, const Var& k, const Var& v, int64_t block_size, real eps) {
  const bool ok = q.rank() == 4 && k.shape() == q.shape() && v.rank() == 4 &&
                  v.size(0) == q.size(0) && v.size(1) == q.size(1) && v.size(2) == q.size(2);
  if (!ok)
    throw Error(fmt::format(
        "lightning_attention: expected q, k (B,H,T,D) and v (B,H,T,M); got q {} k {} v {}",
        shape_str(q.shape()), shape_str(k.shape()), shape_str(v.shape())));
  if (block_size < 1)
    throw Error(fmt::format("lightning_attention: block_size must be >= 1, got {}", block_size));
  const int64_t t_len = q.size(2);
  const Var fq = elu_feature_map(q), fk = elu_feature_map(k);
  Var kv, z;  // the state after the blocks so far: sum F(k_s) v_s^T (B,H,D,M), sum F(k_s) (B,H,1,D)
  std::vector<Var> ys;
  for (int64_t start = 0; start < t_len; start += block_size) {
    const int64_t end = std::min(start + block_size, t_len);
    const Var fq_c = slice(fq, 2, start, end), fk_c = slice(fk, 2, start, end);
    const Var v_c = slice(v, 2, start, end);
    // Intra-block, left product: (F(Q_c) F(K_c)^T with the future hidden) V_c.
    const Var a = masked_fill(matmul(fq_c, fk_c, false, true), above_diagonal(end - start), 0);
    Var num = matmul(a, v_c);    // (B,H,b,M)
    Var den = sum(a, -1, true);  // (B,H,b,1)
    if (start > 0) {             // inter-block, right product: F(Q_c) times the state
      num = add(num, matmul(fq_c, kv));
      den = add(den, matmul(fq_c, z, false, true));
    }
    ys.push_back(div(num, add_scalar(den, eps)));
    if (end == t_len) break;  // the last block's state is never read
    const Var kv_c = matmul(fk_c, v_c, true, false), z_c = sum(fk_c, 2, true);
    kv = start == 0 ? kv_c : add(kv, kv_c);
    z = start == 0 ? z_c : add(z, z_c);
  }
  return ys.size() == 1 ? ys.front() : concat(ys, 2);
}

LightningAttention::LightningAttention(
    int64_t d_model, int64_t nhead, int64_t block_size, Generator& gen, bool bias, double eps)
    : ProjectedAttention("LightningAttention", d_model, nhead, gen, bias),
      block_size_(block_size),
      eps_(static_cast<real>(eps)) {
  if (block_size < 1)
    throw Error(fmt::format("LightningAttention: block_size must be >= 1, got {}", block_size));
}

Var LightningAttention::forward(const Var& x) const {
  const HeadsQKV a = project(x);
  return combine(lightning_attention(a.q, a.k, a.v, block_size_, eps_));
}

}  // namespace attn::nn
