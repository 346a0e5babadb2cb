// selective-ssm's Part 1 (000 §9.2): the HiPPO-LegS memory (below) on random
// signals, its reconstruction error against the state size N beside the offline optimum, with the
// table, notes, results and figures it adds to the run.
//
//   HippoStudy h = hippo_study(cfg, ctx);   // reads hippo_n, hippo_length, hippo_trials,
//   h.falls[0];                             // smooth_width, band_cycles from cfg
//
// Two kinds of signal, each scaled to unit RMS: smooth (white noise under a Gaussian blur) and
// band-limited (random Fourier modes up to a cut-off).
//
// HiPPO-LegS (Gu et al., 2020): an online memory of a 1-D signal's whole history in N numbers,
// the coefficients of its projection onto scaled Legendre polynomials.
//
//   std::vector<double> f = ...;                           // samples f_1 .. f_L
//   std::vector<double> c = legs_online(f, 16);            // 16 coefficients after step L
//   std::vector<double> g = legs_reconstruct(c, f.size());  // the whole history, from c alone
//   double err = rmse(f, g);
//
// The memory at time t approximates the history f(s), 0 <= s <= t, under the uniform measure
// ds/t by the first N of the orthonormal functions
//   g_n(s) = sqrt(2n+1) P_n(2 s/t - 1)         (P_n: Legendre;  integral of g_n g_m ds/t = delta)
// with coefficients c_n(t) = integral_0^t f(s) g_n(s) ds/t. Differentiating in t gives the LegS
// dynamics, scale-invariant because of the 1/t (stretching time leaves them unchanged):
//   c'(t) = (1/t) (A c(t) + B f(t)),
//   A_nk = -sqrt(2n+1) sqrt(2k+1) (n > k),  -(n+1) (n = k),  0 (n < k);   B_n = sqrt(2n+1).
// The projection is the best N-term approximation in that measure, so the reconstruction error
// is the least any N numbers of this basis can give, and it falls as N grows.
//
// Discretisation (bilinear / generalized bilinear transform with alpha = 1/2, step 1 per sample):
// sample k covers s in [k-1, k]; with A_k = A / (k - 1/2), the dynamics at the step's midpoint,
//   (I - A_k/2) c_k = (I + A_k/2) c_{k-1} + (B / (k - 1/2)) f_k,
// one forward substitution per step (I - A_k/2 is lower triangular). Taking the time at the step's
// midpoint (not its end, as HiPPO's reference code does) makes the step second-order accurate: a
// straight line comes back to ~1e-7 instead of ~1e-3 at L = 1000. The first sample starts the
// memory at its exact projection (a constant on [0, 1]): c_1 = f_1 e_0. A constant signal is a
// fixed point of the exact dynamics (A e_0 = -B) and of every step, so its coefficients stay
// (f, 0, ..., 0) exactly. The reconstruction evaluates the expansion at the samples' midpoints,
// s = k - 1/2.
#pragma once

#include <cstdint>
#include <vector>

#include "experiments/config.h"
#include "experiments/run_context.h"

namespace attn::experiments {

// The LegS matrices: a (N,N) row-major, lower triangular; b (N).
struct LegsMatrices {
  int64_t n = 0;
  std::vector<double> a, b;
};
LegsMatrices legs_matrices(int64_t n);

// Coefficients c (N) after feeding f_1 .. f_L through the online update above. Throws attn::Error
// for an empty signal or n < 1.
std::vector<double> legs_online(const std::vector<double>& f, int64_t n);

// The optimal (offline) coefficients of the same basis: the least-squares fit of the samples,
//   c = argmin sum_k (f_k - sum_n c_n g_n(k - 1/2))^2      (Householder QR, least_squares.h),
// the best any N coefficients of this basis can do on these samples (in continuous time it is
// the projection c_n = integral f g_n ds/t). The online update should land on it up to its
// discretisation error. Throws attn::Error when N exceeds the number of samples.
std::vector<double> legs_best_fit(const std::vector<double>& f, int64_t n);

// The history f(k - 1/2), k = 1 .. length, from coefficients c (N):
//   f(s) ~ sum_n c_n sqrt(2n+1) P_n(2 s / length - 1).
std::vector<double> legs_reconstruct(const std::vector<double>& c, int64_t length);

// P_0(x) .. P_{n-1}(x) by the three-term recurrence (m+1) P_{m+1} = (2m+1) x P_m - m P_{m-1}.
std::vector<double> legendre_values(double x, int64_t n);

// sqrt(mean((a - b)^2)); throws attn::Error for sizes that differ or are zero.
double rmse(const std::vector<double>& a, const std::vector<double>& b);

struct HippoStudy {
  std::vector<double> ns;
  std::vector<double> online[2], optimal[2];  // mean RMSE over trials, per signal kind and N
  std::vector<double> gap[2];                 // mean RMSE between the two reconstructions
  bool falls[2] = {true, true};               // strictly decreasing in N
  double worst_gap = 0;                       // the largest gap
};

HippoStudy hippo_study(const Config& cfg, RunContext& ctx);

}  // namespace attn::experiments
