# Cross-compiling attnlab for aarch64 (64-bit ARM) on an x86-64 Debian 12 machine:
#   cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake \
#         -DATTN_AARCH64_SYSROOT=$PWD/build/aarch64-sysroot -DATTN_ARCH=generic
# scripts/cross_aarch64 does all of it: installs the cross compiler and qemu, makes the sysroot,
# builds and runs the unit suite under qemu-aarch64.
#
# The compiler is Debian's cross g++ (crossbuild-essential-arm64: g++-aarch64-linux-gnu, with
# its own arm64 C and C++ runtimes under /usr/aarch64-linux-gnu). The project's libraries for
# arm64 (OpenBLAS, fmt, CLI11, nlohmann-json, doctest) come from a sysroot: a directory holding
# the arm64 packages unpacked (mmdebstrap --variant=extract), so the host's dpkg never gets a
# foreign architecture. Every find_package/find_library looks there and only there; programs
# (ccache, the compiler) come from the host.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)

# The sysroot: -DATTN_AARCH64_SYSROOT=DIR or the environment variable of the same name.
# try_compile projects (find_package(OpenMP), the compiler checks) read this file again without
# the cache, hence the variable is passed on to them explicitly.
if(NOT ATTN_AARCH64_SYSROOT AND DEFINED ENV{ATTN_AARCH64_SYSROOT})
  set(ATTN_AARCH64_SYSROOT $ENV{ATTN_AARCH64_SYSROOT})
endif()
if(NOT ATTN_AARCH64_SYSROOT OR NOT EXISTS ${ATTN_AARCH64_SYSROOT}/usr/include)
  message(FATAL_ERROR "toolchain-aarch64.cmake: ATTN_AARCH64_SYSROOT='${ATTN_AARCH64_SYSROOT}' "
                      "is not an arm64 sysroot (scripts/cross_aarch64 makes one)")
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES ATTN_AARCH64_SYSROOT)
set(CMAKE_SYSROOT ${ATTN_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest and add_test run the binaries through the emulator; -L makes qemu's dynamic loader
# take the arm64 libraries from the sysroot.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${ATTN_AARCH64_SYSROOT})
