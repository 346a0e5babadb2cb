#include "autograd/build_info.h"

#include <cblas.h>

#ifndef ATTN_VERSION
#define ATTN_VERSION "unknown"
#endif
#ifndef ATTN_ARCH_NAME  // set by cmake/arch.cmake; a build outside CMake says so
#define ATTN_ARCH_NAME "unknown"
#endif

namespace attn {

const char* version() {
  return ATTN_VERSION;
}

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

std::string build_summary() {
  return std::string("attnlab ") + version() + "; kernels " + build_arch() + " (" + simd_kernels() +
         "); OpenBLAS " + blas_core();
}

}  // namespace attn
