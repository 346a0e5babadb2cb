// One AVX register of `real`s and the few operations the matrix kernels (small_gemm,
// panel_gemm) need:
//
//   Vec acc = vzero();
//   acc = vfma(vset(a[i]), vload(b), acc);   // acc += a[i] * b[0 .. kLanes)
//   vstore(c, acc);
//
// 8 floats (or 4 doubles in the gradcheck build) with AVX2 + FMA. Builds for a target without
// them (the Debug build, generic x86-64) get the same operations on a plain array, with std::fma
// so that they round exactly as the FMA instructions do.
#pragma once

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>

#include "autograd/real.h"

namespace attn::kernels::simd {

#if defined(__AVX2__) && defined(__FMA__)
#ifdef ATTN_REAL_DOUBLE
using Vec = __m256d;
constexpr int kLanes = 4;
inline Vec vzero() {
  return _mm256_setzero_pd();
}
inline Vec vload(const double* p) {
  return _mm256_loadu_pd(p);
}
inline void vstore(double* p, Vec v) {
  _mm256_storeu_pd(p, v);
}
inline Vec vset(double s) {
  return _mm256_set1_pd(s);
}
inline Vec vfma(Vec a, Vec b, Vec c) {
  return _mm256_fmadd_pd(a, b, c);
}
inline Vec vmul(Vec a, Vec b) {
  return _mm256_mul_pd(a, b);
}
inline Vec vsub(Vec a, Vec b) {
  return _mm256_sub_pd(a, b);
}
inline Vec vadd(Vec a, Vec b) {
  return _mm256_add_pd(a, b);
}
inline Vec vmax(Vec a, Vec b) {
  return _mm256_max_pd(a, b);
}
#else
using Vec = __m256;
constexpr int kLanes = 8;
inline Vec vzero() {
  return _mm256_setzero_ps();
}
inline Vec vload(const float* p) {
  return _mm256_loadu_ps(p);
}
inline void vstore(float* p, Vec v) {
  _mm256_storeu_ps(p, v);
}
inline Vec vset(float s) {
  return _mm256_set1_ps(s);
}
inline Vec vfma(Vec a, Vec b, Vec c) {
  return _mm256_fmadd_ps(a, b, c);
}
inline Vec vmul(Vec a, Vec b) {
  return _mm256_mul_ps(a, b);
}
inline Vec vsub(Vec a, Vec b) {
  return _mm256_sub_ps(a, b);
}
inline Vec vadd(Vec a, Vec b) {
  return _mm256_add_ps(a, b);
}
inline Vec vmax(Vec a, Vec b) {
  return _mm256_max_ps(a, b);
}
#endif  // ATTN_REAL_DOUBLE
#else
constexpr int kLanes = 32 / sizeof(real);
struct Vec {
  real lane[kLanes];
};
inline Vec vzero() {
  return Vec{};
}
inline Vec vload(const real* p) {
  Vec r;
  std::copy(p, p + kLanes, r.lane);
  return r;
}
inline void vstore(real* p, Vec v) {
  std::copy(v.lane, v.lane + kLanes, p);
}
inline Vec vset(real s) {
  Vec r;
  std::fill(r.lane, r.lane + kLanes, s);
  return r;
}
inline Vec vfma(Vec a, Vec b, Vec c) {
  for (int i = 0; i < kLanes; ++i) c.lane[i] = std::fma(a.lane[i], b.lane[i], c.lane[i]);
  return c;
}
inline Vec vmul(Vec a, Vec b) {
  for (int i = 0; i < kLanes; ++i) a.lane[i] *= b.lane[i];
  return a;
}
inline Vec vsub(Vec a, Vec b) {
  for (int i = 0; i < kLanes; ++i) a.lane[i] -= b.lane[i];
  return a;
}
inline Vec vadd(Vec a, Vec b) {
  for (int i = 0; i < kLanes; ++i) a.lane[i] += b.lane[i];
  return a;
}
// As the instruction: a > b ? a : b, so a NaN in either operand gives b.
inline Vec vmax(Vec a, Vec b) {
  for (int i = 0; i < kLanes; ++i) a.lane[i] = a.lane[i] > b.lane[i] ? a.lane[i] : b.lane[i];
  return a;
}
#endif  // AVX2 and FMA

}  // namespace attn::kernels::simd
