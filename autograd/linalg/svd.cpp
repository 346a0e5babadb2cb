// One-sided Jacobi SVD (svd.h).
#include "autograd/linalg/svd.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "autograd/error.h"

namespace attn::linalg {

namespace {

// The columns of m in double, column-major, where m = a (R,C) or, when a is wide (C > R), its
// transpose (rotating columns needs at least as many rows as columns; the singular values of a
// and a^T are the same). r, c: the column length and count of m.
struct Columns {
  std::vector<double> m;
  int64_t r = 0, c = 0;
  bool wide = false;
  double* col(int64_t j) { return &m[static_cast<size_t>(j * r)]; }
};

Columns tall_columns(const Tensor& a) {
  if (a.rank() != 2)
    throw Error(fmt::format("svd: needs a matrix, got a tensor of rank {}", a.rank()));
  const int64_t rows = a.size(0), cols = a.size(1);
  Columns m;
  m.wide = cols > rows;
  m.r = m.wide ? cols : rows;
  m.c = m.wide ? rows : cols;
  m.m.resize(static_cast<size_t>(m.r * m.c));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)  // a[i,j] is m[i,j] (tall) or m[j,i] (wide)
      m.m[static_cast<size_t>(m.wide ? i * m.r + j : j * m.r + i)] = a[i * cols + j];
  return m;
}

// The rotation (c, s) that makes columns x and y (length r) orthogonal, or false when they
// already are to the rounding of an r-term dot product (|x.y| <= r eps |x| |y|: asking for
// less never ends, the rounding of the sums keeps a residue of that size), or when either column
// is below `negligible` (squared norm): a column that small is zero to the rounding of the whole
// matrix, and rotating its residue against another never settles. With alpha = |x|^2,
// beta = |y|^2, gamma = x.y, the angle solves tan(2 theta) = 2 gamma / (beta - alpha) (Golub &
// Van Loan, §8.6.3): zeta = (beta - alpha) / (2 gamma), t = sign(zeta) / (|zeta| +
// sqrt(1 + zeta^2)), c = 1 / sqrt(1 + t^2), s = c t.
bool rotation(
    const double* x, const double* y, int64_t r, double negligible, double& c, double& s) {
  double alpha = 0, beta = 0, gamma = 0;
  for (int64_t i = 0; i < r; ++i) alpha += x[i] * x[i], beta += y[i] * y[i], gamma += x[i] * y[i];
  const double tol = static_cast<double>(r) * std::numeric_limits<double>::epsilon();
  if (std::min(alpha, beta) <= negligible) return false;
  if (gamma == 0 || std::abs(gamma) <= tol * std::sqrt(alpha * beta)) return false;
  const double zeta = (beta - alpha) / (2 * gamma);
  const double t = (zeta >= 0 ? 1.0 : -1.0) / (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
  c = 1 / std::sqrt(1 + t * t);
  s = c * t;
  return true;
}

// x' = c x - s y, y' = s x + c y over n entries spaced by stride.
void rotate(double* x, double* y, int64_t n, int64_t stride, double c, double s) {
  for (int64_t i = 0; i < n; ++i) {
    const double xi = x[i * stride], yi = y[i * stride];
    x[i * stride] = c * xi - s * yi;
    y[i * stride] = s * xi + c * yi;
  }
}

// Rotates the columns of m until all pairs are orthogonal. When vt is given (c x c, row-major,
// starting as the identity), each rotation of columns p, q is applied to its columns p, q as
// well, so that at the end m_final = m_start vt (vt is the V of m = U S V^T).
void orthogonalise(Columns& m, std::vector<double>* vt) {
  constexpr int kMaxSweeps = 100;
  // (r c eps)^2 |m|_F^2: the squared size of the rounding the whole matrix carries.
  double frobenius2 = 0;
  for (double x : m.m) frobenius2 += x * x;
  const double rounding = static_cast<double>(m.r * m.c) * std::numeric_limits<double>::epsilon();
  const double negligible = rounding * rounding * frobenius2;
  bool rotated = true;
  for (int sweep = 0; sweep < kMaxSweeps && rotated; ++sweep) {
    rotated = false;
    for (int64_t p = 0; p + 1 < m.c; ++p)
      for (int64_t q = p + 1; q < m.c; ++q) {
        double c = 0, s = 0;
        if (!rotation(m.col(p), m.col(q), m.r, negligible, c, s)) continue;
        rotated = true;
        rotate(m.col(p), m.col(q), m.r, 1, c, s);
        if (vt) rotate(vt->data() + p, vt->data() + q, m.c, m.c, c, s);
      }
  }
  if (rotated) throw Error("svd: Jacobi rotations did not converge in 100 sweeps");
}

std::vector<double> column_norms(Columns& m) {
  std::vector<double> s(static_cast<size_t>(m.c));
  for (int64_t j = 0; j < m.c; ++j) {
    const double* col = m.col(j);
    double norm2 = 0;
    for (int64_t i = 0; i < m.r; ++i) norm2 += col[i] * col[i];
    s[static_cast<size_t>(j)] = std::sqrt(norm2);
  }
  return s;
}

}  // namespace

std::vector<double> singular_values(const Tensor& a) {
  Columns m = tall_columns(a);
  orthogonalise(m, nullptr);
  std::vector<double> s = column_norms(m);
  std::sort(s.begin(), s.end(), std::greater<>());
  return s;
}

Svd svd(const Tensor& a) {
  Columns m = tall_columns(a);
  std::vector<double> v(static_cast<size_t>(m.c * m.c), 0.0);
  for (int64_t j = 0; j < m.c; ++j) v[static_cast<size_t>(j * m.c + j)] = 1;
  orthogonalise(m, &v);  // m V = U S: column j of m is u_j s_j
  const std::vector<double> s = column_norms(m);
  std::vector<int64_t> order(static_cast<size_t>(m.c));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return s[static_cast<size_t>(x)] > s[static_cast<size_t>(y)];
  });
  // For a tall a: a = U S V^T. For a wide a we decomposed a^T = U' S V'^T, so a = V' S U'^T:
  // a's left vectors are the accumulated rotations, its right vectors the normalised columns.
  const int64_t k = m.c;
  Tensor cols_out({m.r, k}), rot_out({m.c, k}), sv({k});
  for (int64_t j = 0; j < k; ++j) {
    const int64_t src = order[static_cast<size_t>(j)];
    const double sj = s[static_cast<size_t>(src)];
    sv[j] = static_cast<real>(sj);
    const double* col = m.col(src);
    for (int64_t i = 0; i < m.r; ++i)
      cols_out[i * k + j] = static_cast<real>(sj > 0 ? col[i] / sj : 0);
    for (int64_t i = 0; i < m.c; ++i)
      rot_out[i * k + j] = static_cast<real>(v[static_cast<size_t>(i * m.c + src)]);
  }
  return m.wide ? Svd{rot_out, sv, cols_out} : Svd{cols_out, sv, rot_out};
}

}  // namespace attn::linalg
