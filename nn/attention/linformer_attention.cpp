#include "nn/attention/linformer_attention.h"

#include <cmath>

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

LinformerAttention::LinformerAttention(
    int64_t d_model, int64_t nhead, int64_t max_len, int64_t k, Generator& gen, bool bias)
    : ProjectedAttention("LinformerAttention", d_model, nhead, gen, bias),
      max_len_(max_len),
      k_(k) {
  if (max_len < 1 || k < 1)
    throw Error(
        fmt::format("LinformerAttention: max_len and k must be >= 1, got {} and {}", max_len, k));
  const double stddev = 1.0 / std::sqrt(static_cast<double>(k));
  e_proj = register_parameter("e_proj", Tensor::randn({k, max_len}, gen, stddev));
  f_proj = register_parameter("f_proj", Tensor::randn({k, max_len}, gen, stddev));
}

Var LinformerAttention::forward(const Var& x) const {
  const int64_t t = x.size(1);
  if (x.rank() != 3 || t > max_len_)
    throw Error(fmt::format("LinformerAttention: expected x (B,T,{}) with T <= max_len {}, got {}",
                            d_model(), max_len_, shape_str(x.shape())));
  const HeadsQKV a = project(x);                                     // (B,H,T,Dh)
  const Var e = slice(e_proj, 1, 0, t), f = slice(f_proj, 1, 0, t);  // (k,T)
  // k^T E_T^T = (E_T k)^T: the compressed keys already transposed, (B,H,Dh,k); one GEMM per
  // batch entry with E shared, as a Linear layer's weight.
  const Var kt = matmul(a.k, e, /*trans_a=*/true, /*trans_b=*/true);
  const Var vc = transpose(matmul(a.v, f, true, true));  // (B,H,k,Dh) = F_T v
  const real scale = static_cast<real>(1.0 / std::sqrt(static_cast<double>(head_dim())));
  const Var w = softmax(matmul(a.q, kt, false, false, scale));  // (B,H,T,k)
  return combine(matmul(w, vc));
}

}  // namespace attn::nn
