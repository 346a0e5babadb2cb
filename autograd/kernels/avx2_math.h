// Eight-lane versions of vec_math.h's functions, written with AVX2 intrinsics for the loops that
// keep their vectors in registers or branch per vector (softmax's short rows, GELU):
//
//   #ifdef ATTN_AVX2_FLOAT
//   __m256 e = attn::kernels::vexp8(x);               // exp on 8 floats, as vexp
//   __m256 p = attn::kernels::horner8(x, kErfNear);   // a polynomial, one FMA per coefficient
//   #endif
//
// Only in the float build on AVX2 + FMA; elsewhere ATTN_AVX2_FLOAT is undefined and callers use
// their plain loops.
#pragma once

#if defined(__AVX2__) && defined(__FMA__) && !defined(ATTN_REAL_DOUBLE)
#include <immintrin.h>
#define ATTN_AVX2_FLOAT 1

#include "autograd/kernels/isa_variant.h"

namespace attn::kernels::ATTN_ISA_NS {

// vexp on 8 lanes: the same steps as the scalar vexp (vec_math.h), written with intrinsics so
// the vectors of a loop stay in registers from load to store.
inline __m256 vexp8(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.7228391f), lo = _mm256_set1_ps(-103.972084f);
  // Lanes below lo compute on 0 (their result is replaced by 0 below), as in vexp: a denormal
  // intermediate would cost a microcode assist. NaN lanes are restored at the end.
  const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  const __m256 xc = _mm256_andnot_ps(under, _mm256_min_ps(x, hi));
  const __m256 shifter = _mm256_set1_ps(12582912.0f);
  const __m256 n =
      _mm256_sub_ps(_mm256_fmadd_ps(xc, _mm256_set1_ps(1.44269504089f), shifter), shifter);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(p, r), r, r), _mm256_set1_ps(1.0f));
  // 2^n as 2^(n/2) 2^(n - n/2), each exponent field built directly.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  const __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  // Below lo the result is exactly 0 (so -inf, a masked score, gives weight 0); NaN stays NaN.
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  return _mm256_blendv_ps(_mm256_andnot_ps(under, y), x, nan);
}

// c[0] x^(N-1) + ... + c[N-1] on 8 lanes by Horner's rule, as horner() in vec_math.h.
template <int N>
inline __m256 horner8(__m256 x, const float (&c)[N]) {
  __m256 r = _mm256_set1_ps(c[0]);
  for (int i = 1; i < N; ++i) r = _mm256_fmadd_ps(r, x, _mm256_set1_ps(c[i]));
  return r;
}

}  // namespace attn::kernels::ATTN_ISA_NS

#endif
