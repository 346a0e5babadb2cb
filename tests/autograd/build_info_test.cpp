// The build records which CPU target it chose, and the kernels agree with that choice.
#include <doctest/doctest.h>

#include <string>

#include "autograd/build_info.h"

namespace attn {

TEST_SUITE("autograd") {
  TEST_CASE("build_arch names the ATTN_ARCH choice, and the kernel path matches it") {
    const std::string arch = build_arch(), kernels = simd_kernels();
    CAPTURE(arch);
    CAPTURE(kernels);
    CHECK((arch == "x86-64-v3" || arch == "native" || arch == "generic"));
    CHECK((kernels == "AVX2+FMA" || kernels == "portable"));
    if (arch == "x86-64-v3") CHECK(kernels == "AVX2+FMA");  // the level that adds AVX2 and FMA
#if defined(__x86_64__)
    if (arch == "generic") CHECK(kernels == "portable");  // plain x86-64 has SSE2 only
#endif
  }

  TEST_CASE("build_summary names the version, the kernel target and the BLAS core") {
    const std::string s = build_summary();
    CAPTURE(s);
    CHECK(s.find(std::string("attnlab ") + version()) == 0);
    CHECK(s.find(build_arch()) != std::string::npos);
    CHECK(s.find(simd_kernels()) != std::string::npos);
    CHECK(s.find(blas_core()) != std::string::npos);
    CHECK(std::string(version()) != "unknown");  // CMake passed project(VERSION) in
  }
}

}  // namespace attn
