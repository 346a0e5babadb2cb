// One AVX register of `real`s and the few operations the matrix kernels (small_gemm,
// panel_gemm) need:
//
//   Vec acc = vzero();
//   acc = vfma(vset(a[i]), vload(b), acc);   // acc += a[i] * b[0 .. kLanes)
//   vstore(c, acc);
//
// 16 floats (8 doubles in the gradcheck build) in the AVX-512 copy of the kernels, 8 floats (4
// doubles) in the AVX2 + FMA copy (isa.h). The portable copy gets the same operations on a
// plain array of 32 bytes, with std::fma so that they round exactly as the FMA instructions do.
#pragma once

#if defined(__AVX2__) && defined(__FMA__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>

#include "autograd/kernels/isa_variant.h"
#include "autograd/real.h"

namespace attn::kernels::ATTN_ISA_NS::simd {

#if defined(__AVX512F__)
#ifdef ATTN_REAL_DOUBLE
using Vec = __m512d;
constexpr int kLanes = 8;
inline Vec vzero() {
  return _mm512_setzero_pd();
}
inline Vec vload(const double* p) {
  return _mm512_loadu_pd(p);
}
inline void vstore(double* p, Vec v) {
  _mm512_storeu_pd(p, v);
}
inline Vec vset(double s) {
  return _mm512_set1_pd(s);
}
inline Vec vfma(Vec a, Vec b, Vec c) {
  return _mm512_fmadd_pd(a, b, c);
}
inline Vec vmul(Vec a, Vec b) {
  return _mm512_mul_pd(a, b);
}
inline Vec vsub(Vec a, Vec b) {
  return _mm512_sub_pd(a, b);
}
inline Vec vadd(Vec a, Vec b) {
  return _mm512_add_pd(a, b);
}
inline Vec vmax(Vec a, Vec b) {  // masked form: GCC 12 warns on the plain one's undefined source
  return _mm512_mask_max_pd(a, 0xFF, a, b);
}
#else
using Vec = __m512;
constexpr int kLanes = 16;
inline Vec vzero() {
  return _mm512_setzero_ps();
}
inline Vec vload(const float* p) {
  return _mm512_loadu_ps(p);
}
inline void vstore(float* p, Vec v) {
  _mm512_storeu_ps(p, v);
}
inline Vec vset(float s) {
  return _mm512_set1_ps(s);
}
inline Vec vfma(Vec a, Vec b, Vec c) {
  return _mm512_fmadd_ps(a, b, c);
}
inline Vec vmul(Vec a, Vec b) {
  return _mm512_mul_ps(a, b);
}
inline Vec vsub(Vec a, Vec b) {
  return _mm512_sub_ps(a, b);
}
inline Vec vadd(Vec a, Vec b) {
  return _mm512_add_ps(a, b);
}
// As AVX's: a NaN in either operand gives b. The all-lanes masked form: the plain one's
// undefined merge source draws a false -Wmaybe-uninitialized from GCC 12.
inline Vec vmax(Vec a, Vec b) {
  return _mm512_mask_max_ps(a, 0xFFFF, a, b);
}
#endif  // ATTN_REAL_DOUBLE
#elif defined(__AVX2__) && defined(__FMA__)
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
#endif  // AVX-512, AVX2 and FMA, or portable

}  // namespace attn::kernels::ATTN_ISA_NS::simd
