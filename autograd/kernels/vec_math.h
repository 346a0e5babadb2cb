// exp that the compiler can vectorise, and the softmax row kernel built on it.
//
//   attn::kernels::vexp_n(x, y, n);                 // y = exp(x), 8 floats per AVX2 instruction
//   attn::kernels::softmax_row(x_row, y_row, c);    // y = softmax(x) over one row of c
//   float e = attn::kernels::verf(0.5f);             // erf, ~1 ulp, vectorisable
//
// std::exp is a call into libm per element (~20-40 cycles) that GCC cannot vectorise without
// -ffast-math; softmax, cross-entropy, sigmoid and GELU spend most of their time there. vexp
// is the classic range reduction exp(x) = 2^n exp(r), n = round(x / ln 2), |r| <= ln2 / 2,
// with a degree-6 polynomial for exp(r) (Cephes' expf coefficients): at most 2 ulp from
// std::exp over the float range (tests/autograd/vec_math_test.cpp), exp(-inf) = 0 exactly (so
// masked scores get weight 0), overflow gives inf, NaN stays NaN. In the double build
// (gradcheck) vexp is std::exp: the checks see the exact function. The loops live in
// vec_math.cpp, compiled with -fno-trapping-math: without it GCC will not vectorise the
// clamping selects (attnlab never enables floating-point traps, so nothing changes).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "autograd/real.h"

namespace attn::kernels {

inline float vexp(float x) {
  const float hi = 88.7228391f;   // log(FLT_MAX)
  const float lo = -103.972084f;  // below: the result rounds to 0 even as a denormal
  float xc = x > hi ? hi : x;     // comparisons keep NaN (NaN > hi is false)
  // Below lo the result is replaced by 0 at the end; compute on 0 meanwhile, not on lo: a
  // denormal intermediate costs a microcode assist of ~100 cycles (and -inf, a masked score,
  // is common). NaN is computed on 0 too (and returned as itself at the end): converting a NaN
  // n to int below would be undefined behaviour (UBSan reports it). !(xc >= lo) is true for
  // both, in the one comparison the underflow test needed anyway.
  xc = !(xc >= lo) ? 0.0f : xc;
  // n = round(x / ln2) by the 1.5 * 2^23 trick (adding it pushes the fraction out of the
  // mantissa); unlike std::floor this stays inline and vectorises without -ffast-math.
  const float shifter = 12582912.0f;
  const float n = (xc * 1.44269504089f + shifter) - shifter;
  // r = x - n ln2, with ln2 split in two so n * ln2_hi is exact.
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n as two factors 2^(n/2) 2^(n - n/2): each exponent stays in range for n in [-150, 128].
  const int32_t ni = static_cast<int32_t>(n);
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  float s1, s2;
  const int32_t b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
  std::memcpy(&s1, &b1, sizeof s1);
  std::memcpy(&s2, &b2, sizeof s2);
  const float y = p * s1 * s2;
  // Branch-free fix-ups (selects, so the loop still vectorises): overflow, underflow, NaN.
  const float big = x > hi ? INFINITY : y;
  const float small = x < lo ? 0.0f : big;
  return x != x ? x : small;
}

inline double vexp(double x) {
  return std::exp(x);
}

// c[0] x^(N-1) + c[1] x^(N-2) + ... + c[N-1], by Horner's rule (one FMA per coefficient).
template <int N>
inline float horner(float x, const float (&c)[N]) {
  float r = c[0];
  for (int i = 1; i < N; ++i) r = r * x + c[i];
  return r;
}

// An odd function from its two branches, both already computed (a select, not a branch, so a
// loop stays vectorisable): near when |x| = a < edge, else far (computed at a) with x's sign.
// A NaN x fails a < edge and takes far, which is NaN too.
inline float odd_select(float x, float a, float edge, float near, float far) {
  const float signed_far = x < 0 ? -far : far;
  return a < edge ? near : signed_far;
}

// erf that vectorises, within about 1 ulp of float (tests/autograd/vec_math_test.cpp). Two
// branches, both computed and one selected (so a loop over it stays branch-free):
//   |x| <  0.921875:  erf(x) = x + x R(x^2), R a degree-5 polynomial;
//   |x| >= 0.921875:  erf(x) = sign(x) (1 - exp(Q(|x|))), Q ~ log erfc of degree 8 on
//                     [0.921875, 4]; beyond 4, erf rounds to +-1 in float.
// In the second form the exp's relative error is scaled by erfc(|x|) <= 0.19, so the result is
// accurate to the last bit of 1. Coefficients: weighted least-squares (Lawson) fits made for
// this file against double-precision erf/erfc. The double build uses std::erf.
inline constexpr float kErfEdge = 0.921875f;  // where the two branches meet
inline constexpr float kErfNear[] = {-5.99095132e-4f, 4.99320356e-3f,  -2.67666355e-2f,
                                     1.12818167e-1f,  -3.76124948e-1f, 1.28379151e-1f};
inline constexpr float kErfFar[] = {-4.37785076e-7f, -1.54749559e-5f, 4.03589249e-4f,
                                    -4.07623081e-3f, 2.49411836e-2f,  -1.08070031e-1f,
                                    -6.33498609e-1f, -1.12945354e+0f, 1.64002893e-4f};

inline float verf(float x) {
  const float a = x < 0 ? -x : x;
  const float near = x + x * horner(x * x, kErfNear);
  const float far = 1.0f - vexp(horner(a > 4.0f ? 4.0f : a, kErfFar));
  return odd_select(x, a, kErfEdge, near, far);
}

inline double verf(double x) {
  return std::erf(x);
}

// tanh that vectorises, within 3 ulp of float (tests/autograd/vec_math_test.cpp):
//   |x| <  0.625:  tanh(x) = x + x^3 P(x^2), P of degree 4 (fitted like verf's);
//   |x| >= 0.625:  tanh(x) = sign(x) (1 - 2 / (exp(2|x|) + 1)), no cancellation there since
//                  tanh >= 0.55; exp overflowing to inf gives exactly +-1.
// The double build uses std::tanh.
inline float vtanh(float x) {
  constexpr float kNear[] = {-5.70498407e-3f, 2.06390843e-2f, -5.37397154e-2f, 1.33314416e-1f,
                             -3.33332807e-1f};
  const float a = x < 0 ? -x : x;
  const float s = x * x;
  const float near = x + x * s * horner(s, kNear);
  const float far = 1.0f - 2.0f / (vexp(2.0f * a) + 1.0f);
  return odd_select(x, a, 0.625f, near, far);
}

inline double vtanh(double x) {
  return std::tanh(x);
}

// y_i = exp(x_i) for n values (x and y may be the same array).
void vexp_n(const real* x, real* y, int64_t n);
// y_i = tanh(x_i) for n values.
void vtanh_n(const real* x, real* y, int64_t n);
// y = softmax(x) over one contiguous row of c values (max-subtracted, so no overflow). A row of
// only -inf gives NaN, as PyTorch.
void softmax_row(const real* x, real* y, int64_t c);
// Causal attention's row: softmax over row[0, seen) in place, and exactly 0 in [seen, cols).
void softmax_prefix_row(real* row, int64_t seen, int64_t cols);
// The softmax backward for one row: dx_j = y_j (dy_j - sum_i dy_i y_i).
void softmax_backward_row(const real* y, const real* dy, real* dx, int64_t c);
// The same when sum_i dy_i y_i is known (attention: it equals dO . O for the row, D values).
void softmax_backward_row_given(const real* y, const real* dy, real* dx, int64_t c, real dot);
// log sum_j exp(x_j) of one row, max-subtracted (never overflows; the log never sees 0).
real log_sum_exp_row(const real* x, int64_t c);
// y_j = scale * (exp(x_j - shift) - offset) for one row: softmax from a known log-normaliser
// (shift = lse), as cross-entropy's gradient needs it.
void exp_shift_row(const real* x, real shift, real scale, real offset, real* y, int64_t c);
// The log-softmax backward for one row: dx_j = dy_j - exp(y_j) sum_i dy_i.
void log_softmax_backward_row(const real* y, const real* dy, real* dx, int64_t c);

// GELU over n values, exact (x Phi(x) with Phi through erf) or the tanh form, and its
// derivative times dy (kernels/gelu.cpp). Vectorised in the float build, libm in the double
// build.
void gelu_n(const real* x, real* y, int64_t n, bool tanh_form);
// The backward reads Phi(x) back from the forward's output y = x Phi(x).
void gelu_backward_n(
    const real* x, const real* y, const real* dy, real* dx, int64_t n, bool tanh_form);
// y = GELU(x) and slope = dy/dx in one pass (gelu_linear saves the slope for its backward).
void gelu_with_slope_n(const real* x, real* y, real* slope, int64_t n, bool tanh_form);

}  // namespace attn::kernels
