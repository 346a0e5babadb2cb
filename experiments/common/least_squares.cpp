#include "experiments/common/least_squares.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

LeastSquares least_squares(
    std::vector<double> a, std::vector<double> b, int64_t n, int64_t m, int64_t k) {
  if (n < m || m <= 0 || k <= 0 || static_cast<int64_t>(a.size()) != n * m ||
      static_cast<int64_t>(b.size()) != n * k)
    throw Error(fmt::format(
        "least_squares: need A (n,m) with n >= m and B (n,k); got n={} m={} k={}, {} and {} "
        "entries",
        n, m, k, a.size(), b.size()));
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t j = 0; j < m; ++j) {
    // v = column j below the diagonal, its first entry moved away from zero by the norm (the
    // sign chosen to avoid cancellation); H = I - 2 v v^T / v^T v maps the column to -sign*norm
    // e_j.
    double norm = 0;
    for (int64_t i = j; i < n; ++i) norm += a[i * m + j] * a[i * m + j];
    norm = std::sqrt(norm);
    if (norm == 0) throw Error(fmt::format("least_squares: column {} of A is zero", j));
    const double alpha = a[j * m + j] > 0 ? -norm : norm;
    double vv = 0;
    for (int64_t i = j; i < n; ++i) {
      v[i] = a[i * m + j] - (i == j ? alpha : 0.0);
      vv += v[i] * v[i];
    }
    auto reflect = [&](std::vector<double>& mat, int64_t cols, int64_t first) {
      for (int64_t c = first; c < cols; ++c) {
        double dot = 0;
        for (int64_t i = j; i < n; ++i) dot += v[i] * mat[i * cols + c];
        const double f = 2 * dot / vv;
        for (int64_t i = j; i < n; ++i) mat[i * cols + c] -= f * v[i];
      }
    };
    reflect(a, m, j);
    reflect(b, k, 0);
  }
  LeastSquares out;
  double rmax = 0, rmin = INFINITY;
  for (int64_t j = 0; j < m; ++j) {
    rmax = std::max(rmax, std::abs(a[j * m + j]));
    rmin = std::min(rmin, std::abs(a[j * m + j]));
  }
  if (rmin == 0) throw Error("least_squares: A is singular");
  out.r_diagonal_ratio = rmax / rmin;
  out.x.assign(static_cast<size_t>(m * k), 0.0);
  for (int64_t c = 0; c < k; ++c)
    for (int64_t j = m - 1; j >= 0; --j) {
      double s = b[j * k + c];
      for (int64_t l = j + 1; l < m; ++l) s -= a[j * m + l] * out.x[l * k + c];
      out.x[j * k + c] = s / a[j * m + j];
    }
  return out;
}

}  // namespace attn::experiments
