#include "experiments/efficient/hopfield_networks.h"

#include "autograd/var.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

// (n,d) independent uniform +-1 entries, 64 signs per draw of the generator.
Tensor random_signs(int64_t n, int64_t d, Generator& gen) {
  Tensor x = Tensor::empty({n, d});
  uint64_t bits = 0;
  for (int64_t i = 0; i < n * d; ++i) {
    if (i % 64 == 0) bits = gen.next_u64();
    x[i] = (bits >> (i % 64)) & 1 ? real(1) : real(-1);
  }
  return x;
}

// A copy of row `mu` of the (n,d) patterns with `flips` distinct entries negated (the first
// `flips` steps of a Fisher-Yates shuffle choose the positions).
std::vector<real> corrupted_row(const Tensor& patterns, int64_t mu, int64_t flips, Generator& gen) {
  const int64_t d = patterns.size(1);
  std::vector<real> probe(patterns.data() + mu * d, patterns.data() + (mu + 1) * d);
  std::vector<int64_t> order(static_cast<size_t>(d));
  std::iota(order.begin(), order.end(), 0);
  for (int64_t f = 0; f < flips; ++f) {
    std::swap(order[f], order[f + gen.randint(d - f)]);
    probe[order[f]] = -probe[order[f]];
  }
  return probe;
}

// True when sign(state_i) == pattern_i for every i (a 0 fails).
bool same_signs(const real* state, const real* pattern, int64_t d) {
  for (int64_t i = 0; i < d; ++i)
    if (!(state[i] * pattern[i] > 0)) return false;
  return true;
}

// Hebb's rule: W = (1/d) X^T X with a zero diagonal, (d,d) in double.
std::vector<double> hebbian_weights(const Tensor& x) {
  const int64_t n = x.size(0), d = x.size(1);
  std::vector<double> w(static_cast<size_t>(d * d), 0.0);
  for (int64_t mu = 0; mu < n; ++mu) {
    const real* xi = x.data() + mu * d;
    for (int64_t i = 0; i < d; ++i)
      for (int64_t j = 0; j < d; ++j) w[i * d + j] += double(xi[i]) * xi[j];
  }
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) w[i * d + j] = i == j ? 0.0 : w[i * d + j] / double(d);
  return w;
}

// Asynchronous sign updates until a whole sweep changes nothing. Each flip lowers the energy
// E = -s^T W s / 2 by 2 |h_i| > 0 and E takes finitely many values, so the loop ends.
void settle(const std::vector<double>& w, std::vector<real>& s, Generator& gen) {
  const int64_t d = static_cast<int64_t>(s.size());
  std::vector<int64_t> order(static_cast<size_t>(d));
  std::iota(order.begin(), order.end(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (int64_t k = d - 1; k > 0; --k) std::swap(order[k], order[gen.randint(k + 1)]);
    for (int64_t i : order) {
      double h = 0;  // the local field sum_j W_ij s_j
      for (int64_t j = 0; j < d; ++j) h += w[i * d + j] * s[j];
      const real next = h > 0 ? real(1) : h < 0 ? real(-1) : s[i];
      if (next != s[i]) s[i] = next, changed = true;
    }
  }
}

// P(Binomial(d, 1/2) = i), from logs (the terms are tiny for large d).
double binomial_half(int64_t d, int64_t i) {
  return std::exp(std::lgamma(d + 1.0) - std::lgamma(i + 1.0) - std::lgamma(d - i + 1.0) -
                  static_cast<double>(d) * std::log(2.0));
}

// The chance that one other random pattern defeats a perfect nearest-neighbour read-out of a
// probe `flips` away from its own: strictly closer, or (half the time) equally close.
double defeat_probability(int64_t d, int64_t flips) {
  double p = 0.5 * binomial_half(d, flips);
  for (int64_t i = 0; i < flips; ++i) p += binomial_half(d, i);
  return p;
}

}  // namespace

double classical_retrieval(int64_t d, int64_t n, const RetrievalProbes& p, Generator& gen) {
  int64_t successes = 0;
  for (int64_t set = 0; set < p.pattern_sets; ++set) {
    const Tensor x = random_signs(n, d, gen);
    const std::vector<double> w = hebbian_weights(x);
    for (int64_t k = 0; k < p.probes_per_set; ++k) {
      const int64_t mu = gen.randint(n);
      std::vector<real> s = corrupted_row(x, mu, p.flips, gen);
      settle(w, s, gen);
      successes += same_signs(s.data(), x.data() + mu * d, d);
    }
  }
  return static_cast<double>(successes) / static_cast<double>(p.pattern_sets * p.probes_per_set);
}

namespace {

// One modern update of every probe: xi (1,1,P,d) <- X^T softmax(beta X xi), one attention row
// per probe with keys = values = X (1,1,n,d).
Tensor modern_update(const Tensor& xi, const Var& keys, double beta) {
  nn::SdpaOptions plain;
  plain.scale = false;  // beta is applied to the query instead of sdpa's 1/sqrt(d)
  Tensor q = xi.clone();
  for (int64_t i = 0; i < q.numel(); ++i) q[i] = static_cast<real>(beta * q[i]);
  return nn::scaled_dot_product_attention(Var::constant(q), keys, keys, plain).out.value();
}

}  // namespace

double modern_update_gap(int64_t d, int64_t n, double beta, Generator& gen) {
  NoGrad no_tape;
  const Tensor x = random_signs(n, d, gen);
  const std::vector<real> probe = corrupted_row(x, gen.randint(n), d / 8, gen);
  const Tensor xi = Tensor::from_vector({1, 1, 1, d}, probe);
  const Tensor by_attention = modern_update(xi, Var::constant(x.reshape({1, 1, n, d})), beta);
  // The textbook update in double: h_i = beta x_i . xi, p = softmax(h), xi'_j = sum_i p_i x_ij.
  std::vector<double> h(n), out(d, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) h[i] += beta * x[i * d + j] * probe[j];
  const double top = *std::max_element(h.begin(), h.end());
  double z = 0;
  for (double& v : h) z += (v = std::exp(v - top));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) out[j] += h[i] / z * x[i * d + j];
  double gap = 0;
  for (int64_t j = 0; j < d; ++j) gap = std::max(gap, std::fabs(out[j] - by_attention[j]));
  return gap;
}

double modern_retrieval(
    int64_t d, int64_t n, const RetrievalProbes& p, double beta, int64_t steps, Generator& gen) {
  NoGrad no_tape;
  int64_t successes = 0;
  const int64_t np = p.probes_per_set;
  for (int64_t set = 0; set < p.pattern_sets; ++set) {
    const Tensor x = random_signs(n, d, gen);
    std::vector<int64_t> targets;
    Tensor xi = Tensor::empty({1, 1, np, d});
    for (int64_t k = 0; k < np; ++k) {
      targets.push_back(gen.randint(n));
      const std::vector<real> probe = corrupted_row(x, targets.back(), p.flips, gen);
      std::copy(probe.begin(), probe.end(), xi.data() + k * d);
    }
    const Var keys = Var::constant(x.reshape({1, 1, n, d}));
    for (int64_t step = 0; step < steps; ++step) xi = modern_update(xi, keys, beta);
    for (int64_t k = 0; k < np; ++k)
      successes += same_signs(xi.data() + k * d, x.data() + targets[k] * d, d);
  }
  return static_cast<double>(successes) / static_cast<double>(p.pattern_sets * np);
}

double nearest_neighbour_capacity(int64_t d, int64_t flips, double level) {
  return 1 + std::log(level) / std::log1p(-defeat_probability(d, flips));
}

}  // namespace attn::experiments
