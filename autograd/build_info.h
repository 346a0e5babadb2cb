// What this binary was built for, to print beside results (timings mean little without it):
//
//   fmt::print("kernels: {} ({}), BLAS: {}\n", attn::build_arch(), attn::simd_kernels(),
//              attn::blas_core());
//   // kernels: x86-64-v3 (AVX2+FMA), BLAS: Haswell   or   kernels: generic (portable), ...
#pragma once

#include <string>

namespace attn {

// The project's version (CMake's project(VERSION)), e.g. "0.1.0".
const char* version();

// The CPU target CMake's ATTN_ARCH resolved to: "x86-64-v3", "native" or "generic".
const char* build_arch();

// Which kernel path the compiler enabled: "AVX2+FMA" (the 8-lane kernels in
// autograd/kernels/simd.h and friends) or "portable" (the same operations on plain arrays).
const char* simd_kernels();

// The kernel family OpenBLAS picked at run time for this CPU ("Haswell", "SkylakeX", ...), or
// the one forced with the OPENBLAS_CORETYPE environment variable.
const char* blas_core();

// All of the above on one line, for `attnlab --version` and every run's config.json:
// "attnlab 0.1.0; kernels x86-64-v3 (AVX2+FMA); OpenBLAS Zen".
std::string build_summary();

}  // namespace attn
