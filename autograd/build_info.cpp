#include "autograd/build_info.h"

#include <cblas.h>

#include "autograd/kernels/isa.h"

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
  return kernels::isa_name(kernels::active_isa());
}

const char* blas_core() {
  return openblas_get_corename();
}

std::string build_summary() {
  std::string runnable;
  for (kernels::Isa isa : kernels::runnable_isas())
    runnable += std::string(runnable.empty() ? "" : ", ") + kernels::isa_name(isa);
  return std::string("attnlab ") + version() + "; built for " + build_arch() + "; kernels " +
         simd_kernels() + " (CPU runs " + runnable + "); OpenBLAS " + blas_core();
}

}  // namespace attn
