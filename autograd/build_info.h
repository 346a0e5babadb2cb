// What this binary was built for, to print beside results (timings mean little without it):
//
//   fmt::print("kernels: {} ({}), BLAS: {}\n", attn::build_arch(), attn::simd_kernels(),
//              attn::blas_core());
//   // kernels: x86-64-v3 (avx512), BLAS: SkylakeX   or   kernels: generic (generic), ...
#pragma once

#include <string>

namespace attn {

// The project's version (CMake's project(VERSION)), e.g. "0.1.0".
const char* version();

// The CPU target CMake's ATTN_ARCH resolved to, for everything but the hand kernels:
// "x86-64-v3", "native" or "generic".
const char* build_arch();

// The instruction set the hand kernels run with (autograd/kernels/isa.h, chosen at start-up or
// by ATTN_ISA): "avx512", "avx2" or "generic". Throws attn::UsageError for a bad ATTN_ISA.
const char* simd_kernels();

// The kernel family OpenBLAS picked at run time for this CPU ("Haswell", "SkylakeX", ...), or
// the one forced with the OPENBLAS_CORETYPE environment variable.
const char* blas_core();

// All of the above on one line, for `attnlab --version` and every run's config.json:
// "attnlab 0.1.0; built for x86-64-v3; kernels avx512 (CPU runs generic, avx2, avx512);
// OpenBLAS Zen".
std::string build_summary();

}  // namespace attn
