// GELU's loops: y = x Phi(x) (exact, through erf, or PyTorch's tanh form) and its derivative.
//
// The exact form's erf has two branches (vec_math.h: a short polynomial near 0, 1 - exp of a
// longer one further out). A loop that vectorises both and selects per lane pays for the far
// branch everywhere, although GELU's inputs sit mostly near 0: in the decoder benchmark (W4)
// 82% of the 8-value vectors have every lane in the near branch. The AVX2 loops below test each
// vector and compute the far branch only when one of its lanes needs it: the same results, at
// about 0.8 instead of 1.8 ns per value there (and never slower when every vector needs both).
// The backward does the same, with exp(-x^2/2) as a polynomial on the near branch's range.
//
// Compiled without floating-point trap semantics so the plain loops vectorise (vec_math.h).
#pragma GCC optimize("no-trapping-math")

#include <numbers>

#include "autograd/kernels/avx2_math.h"
#include "autograd/kernels/isa_variant.h"
#include "autograd/kernels/vec_math.h"

namespace attn::kernels::ATTN_ISA_NS {

namespace {

constexpr real kInvSqrt2 = real(1 / std::numbers::sqrt2);
constexpr real kInvSqrt2Pi = real(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
constexpr real kSqrt2OverPi = real(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
constexpr real kCubic = real(0.044715);  // the cubic coefficient of the tanh approximation

// Phi(x) ~ (1 + tanh u) / 2 = sigmoid(2u) = 1 / (1 + e^(-2u)),  u = sqrt(2/pi) (x + 0.044715 x^3).
// One exp instead of a tanh; e^(-2u) overflowing to inf gives exactly 0, so no branch is needed.
inline real tanh_form_cdf(real x) {
  const real u = kSqrt2OverPi * (x + kCubic * x * x * x);
  return 1 / (1 + vexp(-2 * u));
}

// The derivatives, given the CDF factor at x (see gelu_backward_n for the formulas).
inline real tanh_form_slope(real x, real s) {
  return s + 2 * x * s * (1 - s) * kSqrt2OverPi * (1 + 3 * kCubic * x * x);
}
inline real exact_slope(real x, real cdf) {
  return cdf + x * kInvSqrt2Pi * vexp(real(-0.5) * x * x);
}

// The CDF factor read back from the forward's output y = x cdf, except within 1e-4 of 0 where
// y / x loses its digits: there both forms are 1/2 + x / sqrt(2 pi) to within x^3 / 15.
inline real cdf_from_output(real x, real y) {
  constexpr real kSmall = real(1e-4);
  const bool small = x < kSmall && x > -kSmall;
  return small ? real(0.5) + x * kInvSqrt2Pi : y / (small ? real(1) : x);
}

#ifdef ATTN_AVX2_FLOAT

// exp(-t/2) for t = x^2 in [0, 2 kErfEdge^2] (the near branch's range of x), degree 6, within
// 2.2e-7 relative in float (a Lawson fit made for this file against exp).
constexpr float kHalfGaussNear[] = {1.41087758e-05f,
                                    -2.43477392e-04f,
                                    2.58454331e-03f,
                                    -2.08213665e-02f,
                                    1.24996454e-01f,
                                    -4.99999583e-01f,
                                    1.0f};

// erfc(a) exp(a^2) for a in [kErfEdge, 4] (a = |x| / sqrt 2, erf's far branch), as a degree-11
// polynomial in a - kScaledErfcMid: within 2.0e-7 relative in float, which moves erf = 1 -
// erfc by at most 2.7e-8 (below half an ulp of 1). A weighted least-squares fit made for this
// file against double-precision erfc. exp(-a^2) = exp(-x^2/2) is the Gaussian the slope needs
// anyway, so erfc costs this polynomial instead of a second exp.
constexpr float kScaledErfcMid = 2.4609375f;
constexpr float kScaledErfc[] = {-4.57059059e-07f, 1.91060667e-06f,  -4.29590591e-06f,
                                 1.55163743e-05f,  -6.44336396e-05f, 2.30343649e-04f,
                                 -7.84925884e-04f, 2.61386624e-03f,  -8.39844812e-03f,
                                 2.58989949e-02f,  -7.63328671e-02f, 2.13749081e-01f};

// The lanes of one vector u = x / sqrt 2 and which of them need erf's far branch.
struct ErfLanes {
  __m256 u, a, far_mask;
  int far_lanes;  // movemask of far_mask: 0 = all near, 0xFF = all far

  explicit ErfLanes(__m256 x) {
    u = _mm256_mul_ps(x, _mm256_set1_ps(kInvSqrt2));
    a = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), u);
    // Not less than the edge, NaN included (a NaN lane takes the far branch, as in verf).
    far_mask = _mm256_cmp_ps(a, _mm256_set1_ps(kErfEdge), _CMP_NLT_UQ);
    far_lanes = _mm256_movemask_ps(far_mask);
  }

  __m256 near() const { return _mm256_fmadd_ps(u, horner8(_mm256_mul_ps(u, u), kErfNear), u); }
  // verf's far branch with u's sign, blended into `near` where a lane needs it.
  __m256 with_far(__m256 near_value) const {
    const __m256 clamped = _mm256_min_ps(a, _mm256_set1_ps(4.0f));
    return blend_far(near_value,
                     _mm256_sub_ps(_mm256_set1_ps(1.0f), vexp8(horner8(clamped, kErfFar))));
  }
  // The same from the Gaussian exp(-u^2) = exp(-x^2/2): erf = 1 - exp(-u^2) kScaledErfc(|u|).
  __m256 with_far_from_gauss(__m256 near_value, __m256 gauss) const {
    const __m256 clamped = _mm256_min_ps(a, _mm256_set1_ps(4.0f));
    const __m256 scaled =
        horner8(_mm256_sub_ps(clamped, _mm256_set1_ps(kScaledErfcMid)), kScaledErfc);
    return blend_far(near_value, _mm256_fnmadd_ps(gauss, scaled, _mm256_set1_ps(1.0f)));
  }
  // erf(|u|) on the far lanes, given u's sign and put in place of `near` there.
  __m256 blend_far(__m256 near_value, __m256 far_of_abs) const {
    const __m256 signed_far = _mm256_or_ps(far_of_abs, _mm256_and_ps(u, _mm256_set1_ps(-0.0f)));
    return _mm256_blendv_ps(near_value, signed_far, far_mask);
  }
  // erf(u): the near polynomial alone when no lane needs more.
  __m256 erf() const {
    if (far_lanes == 0xFF) return with_far(_mm256_setzero_ps());
    const __m256 n = near();
    return far_lanes == 0 ? n : with_far(n);
  }
};

// y = x (1 + erf(x / sqrt 2)) / 2 on whole vectors; returns how many values it did.
int64_t gelu_exact8(const float* x, float* y, int64_t n) {
  const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 v = _mm256_loadu_ps(x + j);
    const __m256 e = ErfLanes(v).erf();
    _mm256_storeu_ps(y + j, _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, e)));
  }
  return j;
}

// dx = dy (Phi(x) + x phi(x)) on whole vectors, phi(x) = exp(-x^2/2) / sqrt(2 pi). A vector
// with every lane near takes Phi from erf's near polynomial and the exp from kHalfGaussNear;
// any other takes Phi from the forward's output as y / x (see gelu_backward_n) and vexp8.
int64_t gelu_exact_backward8(
    const float* x, const float* y, const float* dy, float* dx, int64_t n) {
  const __m256 half = _mm256_set1_ps(0.5f), inv_sqrt_2pi = _mm256_set1_ps(kInvSqrt2Pi);
  const __m256 small = _mm256_set1_ps(1e-4f), sign = _mm256_set1_ps(-0.0f);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 v = _mm256_loadu_ps(x + j);
    const ErfLanes lanes(v);
    const __m256 t = _mm256_mul_ps(v, v);
    __m256 cdf, gauss;
    if (lanes.far_lanes == 0) {
      cdf = _mm256_fmadd_ps(half, lanes.near(), half);
      gauss = horner8(t, kHalfGaussNear);
    } else {
      // y / x, except within 1e-4 of 0 (where it loses its digits): 1/2 + x / sqrt(2 pi).
      const __m256 tiny = _mm256_cmp_ps(_mm256_andnot_ps(sign, v), small, _CMP_LT_OQ);
      const __m256 ratio =
          _mm256_div_ps(_mm256_loadu_ps(y + j), _mm256_blendv_ps(v, _mm256_set1_ps(1.0f), tiny));
      cdf = _mm256_blendv_ps(ratio, _mm256_fmadd_ps(v, inv_sqrt_2pi, half), tiny);
      gauss = vexp8(_mm256_mul_ps(_mm256_set1_ps(-0.5f), t));
    }
    const __m256 slope = _mm256_fmadd_ps(_mm256_mul_ps(v, inv_sqrt_2pi), gauss, cdf);
    _mm256_storeu_ps(dx + j, _mm256_mul_ps(_mm256_loadu_ps(dy + j), slope));
  }
  return j;
}

// y = x Phi(x) and s = Phi(x) + x phi(x) on whole vectors: the forward's erf is shared, and phi
// costs the near polynomial, or one vexp8 that erf's far branch shares (kScaledErfc).
int64_t gelu_exact_with_slope8(const float* x, float* y, float* slope, int64_t n) {
  const __m256 half = _mm256_set1_ps(0.5f), inv_sqrt_2pi = _mm256_set1_ps(kInvSqrt2Pi);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 v = _mm256_loadu_ps(x + j);
    const ErfLanes lanes(v);
    const __m256 t = _mm256_mul_ps(v, v);
    __m256 gauss, cdf;
    if (lanes.far_lanes == 0) {  // two short polynomials
      gauss = horner8(t, kHalfGaussNear);
      cdf = _mm256_fmadd_ps(half, lanes.near(), half);
    } else {  // one exp: the Gaussian, which gives erf's far branch too
      gauss = vexp8(_mm256_mul_ps(_mm256_set1_ps(-0.5f), t));
      const __m256 near = lanes.far_lanes == 0xFF ? _mm256_setzero_ps() : lanes.near();
      cdf = _mm256_fmadd_ps(half, lanes.with_far_from_gauss(near, gauss), half);
    }
    _mm256_storeu_ps(y + j, _mm256_mul_ps(v, cdf));
    _mm256_storeu_ps(slope + j, _mm256_fmadd_ps(_mm256_mul_ps(v, inv_sqrt_2pi), gauss, cdf));
  }
  return j;
}

#endif  // ATTN_AVX2_FLOAT

}  // namespace

// Exact: y = x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2.  Tanh form: y = x sigmoid(2u).
void gelu_n(const real* x, real* y, int64_t n, bool tanh_form) {
  if (tanh_form) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = x[j] * tanh_form_cdf(x[j]);
    return;
  }
  int64_t done = 0;
#ifdef ATTN_AVX2_FLOAT
  done = gelu_exact8(x, y, n);
#endif
#pragma omp simd
  for (int64_t j = done; j < n; ++j) y[j] = real(0.5) * x[j] * (1 + verf(x[j] * kInvSqrt2));
}

// Exact: d/dx [x Phi(x)] = Phi(x) + x phi(x),  phi(x) = e^(-x^2/2) / sqrt(2 pi).
// Tanh form: d/dx [x s] = s + 2 x s (1 - s) u',  s = sigmoid(2u),  u' = sqrt(2/pi) (1 + 3 c x^2)
// (the same as (1 + t)/2 + x (1 - t^2) u'/2 written with t = tanh u = 2s - 1).
// The plain loops read Phi(x) (or s) back from the forward's output as y / x instead of
// recomputing it: one division instead of an erf (or an exp) (cdf_from_output).
void gelu_backward_n(
    const real* x, const real* y, const real* dy, real* dx, int64_t n, bool tanh_form) {
  if (tanh_form) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j)
      dx[j] = dy[j] * tanh_form_slope(x[j], cdf_from_output(x[j], y[j]));
    return;
  }
  int64_t done = 0;
#ifdef ATTN_AVX2_FLOAT
  done = gelu_exact_backward8(x, y, dy, dx, n);
#endif
#pragma omp simd
  for (int64_t j = done; j < n; ++j) dx[j] = dy[j] * exact_slope(x[j], cdf_from_output(x[j], y[j]));
}

// Both at once: y as gelu_n, s = dy/dx as gelu_backward_n's factor (computed from x here, not
// read back from y).
void gelu_with_slope_n(const real* x, real* y, real* slope, int64_t n, bool tanh_form) {
  if (tanh_form) {
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      const real s = tanh_form_cdf(x[j]);
      y[j] = x[j] * s;
      slope[j] = tanh_form_slope(x[j], s);
    }
    return;
  }
  int64_t done = 0;
#ifdef ATTN_AVX2_FLOAT
  done = gelu_exact_with_slope8(x, y, slope, n);
#endif
#pragma omp simd
  for (int64_t j = done; j < n; ++j) {
    const real cdf = real(0.5) * (1 + verf(x[j] * kInvSqrt2));
    y[j] = x[j] * cdf;
    slope[j] = exact_slope(x[j], cdf);
  }
}

}  // namespace attn::kernels::ATTN_ISA_NS
