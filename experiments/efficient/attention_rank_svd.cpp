// Singular values by one-sided Jacobi rotations, the numerical rank and the top-k energy
// (attention_rank.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "autograd/error.h"
#include "experiments/efficient/attention_rank.h"

namespace attn::experiments::rank {

namespace {

// The columns of m in double, column-major, where m = a (R,C) or, when a is wide (C > R), its
// transpose (rotating columns needs at least as many rows as columns; the singular values of a
// and a^T are the same). Returns the column length r and count c through the arguments.
std::vector<double> tall_columns(const Tensor& a, int64_t& r, int64_t& c) {
  const int64_t rows = a.size(0), cols = a.size(1);
  const bool wide = cols > rows;
  r = wide ? cols : rows;
  c = wide ? rows : cols;
  std::vector<double> m(static_cast<size_t>(r * c));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)  // a[i,j] is m[i,j] (tall) or m[j,i] (wide)
      m[static_cast<size_t>(wide ? i * r + j : j * r + i)] = a[i * cols + j];
  return m;
}

// One rotation of columns x and y (length r) that makes them orthogonal. With alpha = |x|^2,
// beta = |y|^2, gamma = x.y, the angle solves tan(2 theta) = 2 gamma / (beta - alpha) (Golub &
// Van Loan, §8.6.3): zeta = (beta - alpha) / (2 gamma), t = sign(zeta) / (|zeta| +
// sqrt(1 + zeta^2)), c = 1 / sqrt(1 + t^2), s = c t; then x' = c x - s y, y' = s x + c y.
// Returns false when the pair is already orthogonal to the rounding of an r-term dot product
// (|x.y| <= r eps |x| |y|: asking for less than that never ends, the rounding of the sums
// keeps a residue of that size).
bool rotate(double* x, double* y, int64_t r) {
  double alpha = 0, beta = 0, gamma = 0;
  for (int64_t i = 0; i < r; ++i) alpha += x[i] * x[i], beta += y[i] * y[i], gamma += x[i] * y[i];
  const double tol = static_cast<double>(r) * std::numeric_limits<double>::epsilon();
  if (gamma == 0 || std::abs(gamma) <= tol * std::sqrt(alpha * beta)) return false;
  const double zeta = (beta - alpha) / (2 * gamma);
  const double t = (zeta >= 0 ? 1.0 : -1.0) / (std::abs(zeta) + std::sqrt(1 + zeta * zeta));
  const double c = 1 / std::sqrt(1 + t * t), s = c * t;
  for (int64_t i = 0; i < r; ++i) {
    const double xi = x[i], yi = y[i];
    x[i] = c * xi - s * yi;
    y[i] = s * xi + c * yi;
  }
  return true;
}

}  // namespace

std::vector<double> singular_values(const Tensor& a) {
  if (a.rank() != 2)
    throw Error(
        fmt::format("attention-rank: singular_values needs a matrix, got rank {}", a.rank()));
  int64_t r = 0, c = 0;
  std::vector<double> cols = tall_columns(a, r, c);
  constexpr int kMaxSweeps = 100;
  bool rotated = true;
  for (int sweep = 0; sweep < kMaxSweeps && rotated; ++sweep) {
    rotated = false;
    for (int64_t p = 0; p + 1 < c; ++p)
      for (int64_t q = p + 1; q < c; ++q)
        rotated |= rotate(&cols[static_cast<size_t>(p * r)], &cols[static_cast<size_t>(q * r)], r);
  }
  if (rotated) throw Error("attention-rank: Jacobi SVD did not converge in 100 sweeps");
  std::vector<double> s(static_cast<size_t>(c));
  for (int64_t j = 0; j < c; ++j) {
    const double* col = &cols[static_cast<size_t>(j * r)];
    double norm2 = 0;
    for (int64_t i = 0; i < r; ++i) norm2 += col[i] * col[i];
    s[static_cast<size_t>(j)] = std::sqrt(norm2);
  }
  std::sort(s.begin(), s.end(), std::greater<>());
  return s;
}

double rank_threshold(int64_t n) {
  return static_cast<double>(n) * static_cast<double>(std::numeric_limits<float>::epsilon());
}

int64_t numerical_rank(const std::vector<double>& s, int64_t n) {
  if (s.empty()) return 0;
  const double cut = s.front() * rank_threshold(n);
  return std::count_if(s.begin(), s.end(), [&](double v) { return v > cut; });
}

double top_energy(const std::vector<double>& s, int64_t k) {
  double top = 0, all = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    all += s[i] * s[i];
    if (static_cast<int64_t>(i) < k) top += s[i] * s[i];
  }
  return all > 0 ? top / all : 0;
}

}  // namespace attn::experiments::rank
