#include "autograd/gradcheck.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/tape.h"

namespace attn {

GradcheckResult gradcheck(const std::vector<Var>& leaves,
                          const std::function<Var()>& f,
                          double eps) {
  for (const Var& leaf : leaves)
    if (!leaf.requires_grad()) throw Error("gradcheck: every leaf must require a gradient");
  tape().clear();
  Tensor y0;
  {
    NoGrad off;
    y0 = f().value().clone();
  }
  const int64_t ny = y0.numel();

  // Numerical Jacobian, one column block per leaf: numeric[l] is (ny, n_l).
  std::vector<std::vector<double>> numeric(leaves.size());
  for (size_t l = 0; l < leaves.size(); ++l) {
    Tensor& x = const_cast<Var&>(leaves[l]).value();
    const int64_t nx = x.numel();
    numeric[l].assign(ny * nx, 0.0);
    NoGrad off;
    for (int64_t i = 0; i < nx; ++i) {
      const real saved = x[i];
      x[i] = saved + eps;
      const Tensor plus = f().value().clone();
      x[i] = saved - eps;
      const Tensor minus = f().value().clone();
      x[i] = saved;
      for (int64_t j = 0; j < ny; ++j)
        numeric[l][j * nx + i] = (double(plus[j]) - double(minus[j])) / (2 * eps);
    }
  }

  // Analytical Jacobian row by row, compared as we go.
  GradcheckResult result;
  for (int64_t j = 0; j < ny; ++j) {
    for (const Var& leaf : leaves) const_cast<Var&>(leaf).zero_grad();
    Var y = f();
    if (y.shape() != y0.shape()) throw Error("gradcheck: f() changed its output shape");
    Tensor seed(y.shape());
    seed[j] = 1;
    if (y.requires_grad()) y.backward(seed);
    for (size_t l = 0; l < leaves.size(); ++l) {
      const int64_t nx = leaves[l].numel();
      for (int64_t i = 0; i < nx; ++i) {
        const double a = leaves[l].has_grad() ? double(leaves[l].node().grad[i]) : 0.0;
        const double n = numeric[l][j * nx + i];
        const double err = std::abs(a - n) / std::max(1.0, std::abs(n));
        ++result.entries;
        if (err > result.max_error || std::isnan(err)) {
          result.max_error = std::isnan(err) ? INFINITY : err;
          result.worst = fmt::format(
              "leaf {} element {}, output {}: analytic {:.10g} numeric {:.10g}", l, i, j, a, n);
        }
      }
    }
  }
  tape().clear();
  return result;
}

}  // namespace attn
