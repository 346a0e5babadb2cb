// Associative memories that store random +-1 patterns and retrieve one from a corrupted probe:
// the classical Hopfield network (1982) and the modern continuous one (Ramsauer et al. 2020),
// whose update is one call of scaled dot-product attention.
//
//   attn::Generator gen(0);
//   RetrievalProbes p{.flips = 4, .pattern_sets = 20, .probes_per_set = 16};
//   double c = classical_retrieval(/*d=*/32, /*n=*/4, p, gen);   // success rate, ~0.97
//   double m = modern_retrieval(32, 4096, p, /*beta=*/1.0, /*steps=*/1, gen);
//
// The test is the same for both. Draw n patterns with independent uniform +-1 entries, pick one
// of them, flip exactly `flips` of its d entries (distinct positions, chosen uniformly): that is
// the probe. Run the network's update from the probe. The retrieval succeeds when the sign of
// every one of the d entries of the final state equals the chosen pattern's (a 0 counts as
// wrong; the negated pattern counts as wrong).
//
// Classical: W = (1/d) sum_mu xi^mu xi^mu^T with W_ii = 0 (Hebb's rule), and asynchronous sign
// updates s_i <- sign(sum_j W_ij s_j), one neuron at a time in a fresh random order per sweep,
// until a sweep changes nothing (a local field of exactly 0 leaves s_i as it is, so the energy
// -s^T W s / 2 never rises and the loop ends).
//
// Modern: xi <- X^T softmax(beta X xi), X (n,d) holding the patterns as rows. That is attention
// with query beta * xi and keys = values = the patterns: scaled_dot_product_attention(beta xi,
// X, X) without its own 1/sqrt(d) factor. Ramsauer et al.'s beta = 1/sqrt(d_k) makes it exactly
// the Transformer's layer.
#pragma once

#include <cstdint>

#include "autograd/generator.h"

namespace attn::experiments {

struct RetrievalProbes {
  int64_t flips = 0;           // entries negated in each probe, 0 <= flips < d / 2
  int64_t pattern_sets = 1;    // independent draws of the n >= 1 stored patterns
  int64_t probes_per_set = 1;  // probes per draw, each from a uniformly chosen stored pattern
};

// The success rate of n patterns of dimension d stored by Hebb's rule, retrieved by asynchronous
// sign updates.
double classical_retrieval(int64_t d, int64_t n, const RetrievalProbes& p, Generator& gen);

// The success rate of n patterns of dimension d as the keys and values of attention; `steps`
// updates of the probe (Ramsauer et al.: one is usually enough) with inverse temperature beta.
double modern_retrieval(
    int64_t d, int64_t n, const RetrievalProbes& p, double beta, int64_t steps, Generator& gen);

// The largest entry-wise difference between one modern update computed as attention (the path
// modern_retrieval takes) and the same update written out in double, xi' = X^T softmax(beta X xi),
// for n random patterns of dimension d and a probe with d / 8 entries flipped.
double modern_update_gap(int64_t d, int64_t n, double beta, Generator& gen);

// A perfect nearest-neighbour read-out fails when, among the n - 1 other random patterns, one
// lies strictly closer to the probe than its own pattern (`flips` away), or one lies equally
// close and the tie goes the wrong way (counted as half): chance 1 - (1 - P)^(n-1) with
// P = P(B < flips) + P(B = flips) / 2, B ~ Binomial(d, 1/2). An update that reads only the probe
// cannot do better on average, so 1 minus that chance is a ceiling for its success rate.
// The n at which the failure chance reaches 1 - level: n = 1 + ln(level) / ln(1 - P).
double nearest_neighbour_capacity(int64_t d, int64_t flips, double level);

}  // namespace attn::experiments
