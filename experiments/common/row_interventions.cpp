#include "experiments/common/row_interventions.h"

#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

std::vector<size_t> visible(const std::vector<double>& a0) {
  std::vector<size_t> idx;
  for (size_t j = 0; j < a0.size(); ++j)
    if (a0[j] > 0) idx.push_back(j);
  if (idx.empty()) throw Error("row_interventions: the attention row has no visible key");
  return idx;
}

// a = softmax(z) over the visible keys, 0 elsewhere.
std::vector<double> softmax_visible(const std::vector<double>& z, const std::vector<size_t>& vis) {
  double top = -1e300;
  for (size_t j : vis) top = std::max(top, z[j]);
  std::vector<double> a(z.size(), 0.0);
  double sum = 0;
  for (size_t j : vis) sum += a[j] = std::exp(z[j] - top);
  for (size_t j : vis) a[j] /= sum;
  return a;
}

// o = a V: (n) x (n,d) -> (d)
std::vector<double> mix(const std::vector<double>& a, const std::vector<double>& v, int64_t d) {
  std::vector<double> o(static_cast<size_t>(d), 0.0);
  for (size_t j = 0; j < a.size(); ++j)
    for (int64_t c = 0; c < d; ++c) o[static_cast<size_t>(c)] += a[j] * v[j * d + c];
  return o;
}

double norm2(const std::vector<double>& x) {
  return std::inner_product(x.begin(), x.end(), x.begin(), 0.0);
}

}  // namespace

std::vector<double> permuted_row(const std::vector<double>& a0, Generator& gen) {
  const std::vector<size_t> vis = visible(a0);
  std::vector<size_t> order = vis;
  // Fisher-Yates with the project's generator (reproducible from the seed).
  for (size_t i = order.size(); i > 1; --i) {
    const auto k = static_cast<size_t>(gen.uniform() * static_cast<double>(i)) % i;
    std::swap(order[i - 1], order[k]);
  }
  std::vector<double> p(a0.size(), 0.0);
  for (size_t i = 0; i < vis.size(); ++i) p[vis[i]] = a0[order[i]];
  return p;
}

std::vector<double> uniform_row(const std::vector<double>& a0) {
  const std::vector<size_t> vis = visible(a0);
  std::vector<double> u(a0.size(), 0.0);
  for (size_t j : vis) u[j] = 1.0 / static_cast<double>(vis.size());
  return u;
}

double total_variation(const std::vector<double>& p, const std::vector<double>& q) {
  double s = 0;
  for (size_t j = 0; j < p.size(); ++j) s += std::abs(p[j] - q[j]);
  return s / 2;
}

double js_divergence(const std::vector<double>& p, const std::vector<double>& q) {
  double s = 0;
  for (size_t j = 0; j < p.size(); ++j) {
    const double m = (p[j] + q[j]) / 2;
    if (p[j] > 0) s += p[j] * std::log(p[j] / m) / 2;
    if (q[j] > 0) s += q[j] * std::log(q[j] / m) / 2;
  }
  return s;
}

double relative_output_change(const std::vector<double>& a0,
                              const std::vector<double>& a,
                              const std::vector<double>& v,
                              int64_t d) {
  std::vector<double> diff(a.size());
  for (size_t j = 0; j < a.size(); ++j) diff[j] = a[j] - a0[j];
  const double base = norm2(mix(a0, v, d)), moved = norm2(mix(diff, v, d));
  if (base == 0) return moved == 0 ? 0 : INFINITY;
  return std::sqrt(moved / base);
}

double adversarial_objective(const std::vector<double>& z,
                             const std::vector<double>& a0,
                             const std::vector<double>& v,
                             int64_t d,
                             double lambda,
                             std::vector<double>* dz) {
  const std::vector<size_t> vis = visible(a0);
  const std::vector<double> a = softmax_visible(z, vis);
  const std::vector<double> o0 = mix(a0, v, d), o = mix(a, v, d);
  const double scale = std::max(norm2(o0), 1e-30);
  std::vector<double> r(o.size());
  for (size_t c = 0; c < o.size(); ++c) r[c] = o[c] - o0[c];
  double push = 0;
  for (size_t j : vis) push += (a[j] - a0[j]) * (a[j] - a0[j]);
  const double loss = norm2(r) / scale - lambda * push;
  if (dz) {
    std::vector<double> da(a.size(), 0.0);
    double dot = 0;
    for (size_t j : vis) {
      double g = 0;
      for (int64_t c = 0; c < d; ++c) g += r[static_cast<size_t>(c)] * v[j * d + c];
      da[j] = 2 * g / scale - 2 * lambda * (a[j] - a0[j]);
      dot += a[j] * da[j];
    }
    dz->assign(a.size(), 0.0);
    for (size_t j : vis) (*dz)[j] = a[j] * (da[j] - dot);
  }
  return loss;
}

std::vector<double> adversarial_row(const std::vector<double>& a0,
                                    const std::vector<double>& v,
                                    int64_t d,
                                    const std::vector<double>& start,
                                    const AdversarialOptions& options) {
  const std::vector<size_t> vis = visible(a0);
  std::vector<double> z(a0.size(), 0.0), dz;
  // log of the start, floored so a zero weight on a visible key can still grow.
  for (size_t j : vis) z[j] = std::log(std::max(start[j], 1e-8));
  for (int s = 0; s < options.steps; ++s) {
    adversarial_objective(z, a0, v, d, options.lambda, &dz);
    for (size_t j : vis) z[j] -= options.lr * dz[j];
  }
  return softmax_visible(z, vis);
}

}  // namespace attn::experiments
