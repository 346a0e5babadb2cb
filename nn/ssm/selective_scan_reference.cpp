#include "nn/ssm/selective_scan_reference.h"

#include <fmt/format.h>

#include <vector>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

Var zero_scan_state(int64_t batch, const Var& a) {
  return Var::constant(Tensor::zeros({batch, a.size(0), a.size(1)}));
}

Var selective_scan_step(
    const Var& u_t, const Var& delta_t, const Var& a, const Var& b_t, const Var& c_t, Var& h) {
  const int64_t batch = u_t.size(0), e = a.size(0), n = a.size(1);
  const Var dt = reshape(delta_t, {batch, e, 1});
  const Var ut = reshape(u_t, {batch, e, 1});
  const Var a_bar = exp(mul(dt, a));                     // (B,E,N): exp(delta_t A), the decay
  const Var b_bar_x = mul(mul(dt, ut), b_t);             // (B,E,1) * (B,1,N): delta_t B_t u_t
  h = add(mul(a_bar, h), b_bar_x);                       // h_t = A_bar h_{t-1} + B_bar x_t
  const Var y = matmul(h, reshape(c_t, {batch, n, 1}));  // (B,E,1): C_t . h_t
  return reshape(y, {batch, 1, e});
}

Var selective_scan_sequential(
    const Var& u, const Var& delta, const Var& a, const Var& b, const Var& c, const Var& d) {
  const bool ok = u.rank() == 3 && delta.shape() == u.shape() && a.rank() == 2 &&
                  a.size(0) == u.size(2) && b.rank() == 3 && b.size(0) == u.size(0) &&
                  b.size(1) == u.size(1) && b.size(2) == a.size(1) && c.shape() == b.shape() &&
                  d.rank() == 1 && d.size(0) == u.size(2);
  if (!ok)
    throw Error(fmt::format(
        "selective_scan_sequential: expected u (B,T,E), delta (B,T,E), A (E,N), B (B,T,N), "
        "C (B,T,N), D (E); got u {}, delta {}, A {}, B {}, C {}, D {}",
        shape_str(u.shape()), shape_str(delta.shape()), shape_str(a.shape()), shape_str(b.shape()),
        shape_str(c.shape()), shape_str(d.shape())));
  const int64_t t_len = u.size(1);
  Var h = zero_scan_state(u.size(0), a);
  std::vector<Var> ys;
  ys.reserve(static_cast<size_t>(t_len));
  for (int64_t t = 0; t < t_len; ++t)
    ys.push_back(selective_scan_step(slice(u, 1, t, t + 1), slice(delta, 1, t, t + 1), a,
                                     slice(b, 1, t, t + 1), slice(c, 1, t, t + 1), h));
  return add(concat(ys, 1), mul(u, d));  // + D u, the skip
}

}  // namespace attn::nn
