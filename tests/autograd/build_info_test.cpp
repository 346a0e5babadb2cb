// The build records which CPU target it chose, and the kernels agree with that choice.
#include <doctest/doctest.h>

#include <string>

#include "autograd/build_info.h"

namespace attn {

TEST_SUITE("autograd") {
  TEST_CASE("build_arch names the ATTN_ARCH choice; simd_kernels the instruction set in use") {
    const std::string arch = build_arch(), kernels = simd_kernels();
    CAPTURE(arch);
    CAPTURE(kernels);
    CHECK((arch == "x86-64-v3" || arch == "native" || arch == "generic"));
    CHECK((kernels == "generic" || kernels == "avx2" || kernels == "avx512"));
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
