// Replacing one attention row by another distribution, for the attention-shuffle experiment
// ("attention is not explanation", Jain & Wallace 2019): a random permutation of the row, the
// uniform row, and an adversarial row found by gradient steps that is far from the original yet
// gives nearly the same head output.
//
//   std::vector<double> a0 = {...};             // one attention row over n keys (sums to 1)
//   std::vector<double> v = {...};              // the head's values, n x d, row-major
//   auto p = permuted_row(a0, gen);             // same weights, other keys
//   auto u = uniform_row(a0);
//   auto adv = adversarial_row(a0, v, d, p, {.steps = 100});   // starts from p
//   total_variation(a0, adv);  js_divergence(a0, adv);  relative_output_change(a0, adv, v, d);
//
// Only the keys the row can see take part: a key with weight exactly 0 is hidden (masked or
// padding; see nn/attention/sdpa.h) and stays at 0 in every replacement.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/generator.h"

namespace attn::experiments {

// The visible weights of a0 shuffled among the visible keys (a uniform random permutation).
std::vector<double> permuted_row(const std::vector<double>& a0, Generator& gen);
// 1/m on each of the m visible keys.
std::vector<double> uniform_row(const std::vector<double>& a0);

// 1/2 sum |p - q|, in [0, 1].
double total_variation(const std::vector<double>& p, const std::vector<double>& q);
// JS(p, q) = KL(p || m)/2 + KL(q || m)/2 with m = (p + q)/2, natural log: in [0, log 2].
double js_divergence(const std::vector<double>& p, const std::vector<double>& q);
// |(a - a0) V| / |a0 V|: how far the head output o = a V moves (0 when |a0 V| is 0 and a = a0).
double relative_output_change(const std::vector<double>& a0,
                              const std::vector<double>& a,
                              const std::vector<double>& v,
                              int64_t d);

struct AdversarialOptions {
  int steps = 100;      // gradient steps on the logits
  double lr = 1.0;      // step size
  double lambda = 0.1;  // weight of the push away from a0
};

// The search's objective over the logits z of the visible keys (a = softmax(z), hidden keys 0):
//   L(z) = |a V - a0 V|^2 / |a0 V|^2  -  lambda |a - a0|^2
// small when the output stays put and the row moves away. Writes dL/dz into dz when given:
//   dL/da_j = 2 (a V - o0) . v_j / |o0|^2 - 2 lambda (a_j - a0_j),
//   dL/dz_j = a_j (dL/da_j - sum_k a_k dL/da_k)   (the softmax Jacobian).
double adversarial_objective(const std::vector<double>& z,
                             const std::vector<double>& a0,
                             const std::vector<double>& v,
                             int64_t d,
                             double lambda,
                             std::vector<double>* dz = nullptr);
// Gradient descent on L from the logits log(start) (start: a distribution with the same visible
// keys, e.g. a permutation of a0); returns softmax(z) at the end.
std::vector<double> adversarial_row(const std::vector<double>& a0,
                                    const std::vector<double>& v,
                                    int64_t d,
                                    const std::vector<double>& start,
                                    const AdversarialOptions& options = {});

}  // namespace attn::experiments
