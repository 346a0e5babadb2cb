// The largest magnitude among a tensor's entries, max_i |x_i| in double (0 for an empty tensor):
// the scale a largest difference is read against.
//
//   const double gap = max_abs_diff(ours, reference);     // autograd/tensor.h
//   ctx.result("relative_gap", gap / kit::max_abs(reference));
#pragma once

#include <algorithm>
#include <cmath>

#include "autograd/tensor.h"

namespace attn::experiments::kit {

inline double max_abs(const Tensor& x) {
  double m = 0;
  for (int64_t i = 0; i < x.numel(); ++i) m = std::max(m, std::abs(static_cast<double>(x[i])));
  return m;
}

}  // namespace attn::experiments::kit
