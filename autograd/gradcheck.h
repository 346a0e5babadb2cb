// Finite-difference gradient checking over the full Jacobian.
//
//   std::vector<Var> leaves = {x, w};                  // what to differentiate with respect to
//   auto f = [&] { return matmul(x, w); };             // recomputes from the current leaf values
//   GradcheckResult r = gradcheck(leaves, f);
//   CHECK(r.max_error <= 1e-6);
//
// Numerical column i of the Jacobian: (f(x + eps e_i) - f(x - eps e_i)) / (2 eps).
// Analytical row j: one backward pass with upstream gradient e_j (a one-hot on output j).
// Every entry is compared: error = |analytic - numeric| / max(1, |numeric|).
// Meant for the double build (ATTN_REAL_DOUBLE); in float the differences are noise.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/var.h"

namespace attn {

struct GradcheckResult {
  double max_error = 0;  // worst entry by the error measure above
  std::string worst;     // where: "leaf 1 element 7, output 3: analytic .. numeric .."
  int64_t entries = 0;   // Jacobian entries compared
};

GradcheckResult gradcheck(const std::vector<Var>& leaves,
                          const std::function<Var()>& f,
                          double eps = 1e-6);

}  // namespace attn
