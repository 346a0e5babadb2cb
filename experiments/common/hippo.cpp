#include "experiments/common/hippo.h"

#include "experiments/common/least_squares.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

LegsMatrices legs_matrices(int64_t n) {
  if (n < 1) throw Error(fmt::format("HiPPO-LegS: the state size must be at least 1, got {}", n));
  LegsMatrices m{n, std::vector<double>(static_cast<size_t>(n * n), 0.0),
                 std::vector<double>(static_cast<size_t>(n))};
  for (int64_t i = 0; i < n; ++i) {
    m.b[static_cast<size_t>(i)] = std::sqrt(2.0 * static_cast<double>(i) + 1.0);
    for (int64_t k = 0; k < i; ++k)
      m.a[static_cast<size_t>(i * n + k)] = -std::sqrt(2.0 * static_cast<double>(i) + 1.0) *
                                            std::sqrt(2.0 * static_cast<double>(k) + 1.0);
    m.a[static_cast<size_t>(i * n + i)] = -static_cast<double>(i + 1);
  }
  return m;
}

std::vector<double> legs_online(const std::vector<double>& f, int64_t n) {
  if (f.empty()) throw Error("HiPPO-LegS: the signal is empty");
  const LegsMatrices m = legs_matrices(n);
  const auto at = [&](int64_t i, int64_t k) { return m.a[static_cast<size_t>(i * n + k)]; };
  std::vector<double> c(static_cast<size_t>(n), 0.0), rhs(static_cast<size_t>(n));
  c[0] = f[0];  // the exact projection of one sample (a constant on [0, 1])
  for (size_t k = 2; k <= f.size(); ++k) {
    const double t = static_cast<double>(k) - 0.5;  // the step's midpoint
    const double h = 0.5 / t;                       // A_k / 2 = A h
    // rhs = (I + A h) c + (B / t) f_k   (A lower triangular: row i uses c_0 .. c_i)
    for (int64_t i = 0; i < n; ++i) {
      double s = c[static_cast<size_t>(i)];
      for (int64_t j = 0; j <= i; ++j) s += h * at(i, j) * c[static_cast<size_t>(j)];
      rhs[static_cast<size_t>(i)] = s + m.b[static_cast<size_t>(i)] / t * f[k - 1];
    }
    // (I - A h) c = rhs by forward substitution: row i has 1 - h A_ii on the diagonal.
    for (int64_t i = 0; i < n; ++i) {
      double s = rhs[static_cast<size_t>(i)];
      for (int64_t j = 0; j < i; ++j) s += h * at(i, j) * c[static_cast<size_t>(j)];
      c[static_cast<size_t>(i)] = s / (1.0 - h * at(i, i));
    }
  }
  return c;
}

std::vector<double> legendre_values(double x, int64_t n) {
  std::vector<double> p(static_cast<size_t>(std::max<int64_t>(n, 0)));
  if (n > 0) p[0] = 1.0;
  if (n > 1) p[1] = x;
  for (int64_t m = 1; m + 1 < n; ++m) {
    const auto md = static_cast<double>(m);
    p[static_cast<size_t>(m + 1)] =
        ((2 * md + 1) * x * p[static_cast<size_t>(m)] - md * p[static_cast<size_t>(m - 1)]) /
        (md + 1);
  }
  return p;
}

namespace {
// x of sample k (1-based) on [-1, 1]: its midpoint k - 1/2 over the length L.
double sample_x(size_t k, size_t length) {
  return 2.0 * (static_cast<double>(k) - 0.5) / static_cast<double>(length) - 1.0;
}
}  // namespace

std::vector<double> legs_best_fit(const std::vector<double>& f, int64_t n) {
  if (f.empty()) throw Error("HiPPO-LegS: the signal is empty");
  const LegsMatrices m = legs_matrices(n);
  const auto rows = static_cast<int64_t>(f.size());
  std::vector<double> basis(static_cast<size_t>(rows * n));  // (L,N): g_n at sample k
  for (size_t k = 1; k <= f.size(); ++k) {
    const std::vector<double> p = legendre_values(sample_x(k, f.size()), n);
    for (size_t i = 0; i < p.size(); ++i)
      basis[(k - 1) * static_cast<size_t>(n) + i] = m.b[i] * p[i];
  }
  return least_squares(std::move(basis), f, rows, n, 1).x;
}

std::vector<double> legs_reconstruct(const std::vector<double>& c, int64_t length) {
  if (c.empty() || length < 1)
    throw Error("HiPPO-LegS: reconstruction needs coefficients and a length of at least 1");
  const LegsMatrices m = legs_matrices(static_cast<int64_t>(c.size()));
  std::vector<double> g(static_cast<size_t>(length), 0.0);
  for (size_t k = 1; k <= g.size(); ++k) {
    const std::vector<double> p =
        legendre_values(sample_x(k, g.size()), static_cast<int64_t>(c.size()));
    for (size_t i = 0; i < c.size(); ++i) g[k - 1] += c[i] * m.b[i] * p[i];
  }
  return g;
}

double rmse(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.empty())
    throw Error(fmt::format("rmse: needs two non-empty vectors of one size, got {} and {}",
                            a.size(), b.size()));
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(s / static_cast<double>(a.size()));
}

}  // namespace attn::experiments
