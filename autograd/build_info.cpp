#include "autograd/build_info.h"

#include <cblas.h>

#ifndef ATTN_ARCH_NAME  // set by cmake/arch.cmake; a build outside CMake says so
#define ATTN_ARCH_NAME "unknown"
#endif

namespace attn {

const char* build_arch() {
  return ATTN_ARCH_NAME;
}

const char* simd_kernels() {
#if defined(__AVX2__) && defined(__FMA__)
  return "AVX2+FMA";
#else
  return "portable";
#endif
}

const char* blas_core() {
  return openblas_get_corename();
}

}  // namespace attn
