# Which CPU the kernels are compiled for: -DATTN_ARCH=auto|native|x86-64-v3|generic.
#   x86-64-v3  AVX2 + FMA: the hand-written 8-lane kernels (autograd/kernels/simd.h, pack.cpp,
#              panel_gemm.cpp, gelu.cpp, ...). The binary then runs only on CPUs that have them.
#   native     whatever the build machine has (-march=native); not for binaries you copy around.
#   generic    no -march flag: the compiler's default target (plain x86-64 = SSE2, or aarch64).
#              The kernels take their portable path (std::fma on plain arrays).
#   auto       (default) x86-64-v3 when the compiler targets x86-64 and this machine's CPU has
#              AVX2 and FMA, otherwise generic; never an x86 flag on another architecture.
#              Debug builds resolve auto to generic: they are the textbook path, read in gdb.
# The choice is printed at configure time and compiled in (attn::build_arch(), autograd/build_info.h).
set(attn_arch_choices auto native x86-64-v3 generic)
if(NOT ATTN_ARCH IN_LIST attn_arch_choices)
  message(FATAL_ERROR "ATTN_ARCH=${ATTN_ARCH}: expected one of ${attn_arch_choices}")
endif()

string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" attn_target_cpu)
if(attn_target_cpu MATCHES "^(x86_64|amd64)$")
  set(attn_targets_x86_64 ON)
else()
  set(attn_targets_x86_64 OFF)
endif()

# Does the CPU running this configure step have AVX2 and FMA? (Only meaningful when it is
# also the CPU the binary is built for, i.e. not cross-compiling.)
set(attn_host_has_avx2_fma OFF)
if(attn_targets_x86_64 AND NOT CMAKE_CROSSCOMPILING AND EXISTS /proc/cpuinfo)
  file(STRINGS /proc/cpuinfo attn_cpu_flags REGEX "^flags" LIMIT_COUNT 1)
  if(attn_cpu_flags MATCHES "[ \t]avx2([ \t]|$)" AND attn_cpu_flags MATCHES "[ \t]fma([ \t]|$)")
    set(attn_host_has_avx2_fma ON)
  endif()
endif()

set(ATTN_ARCH_RESOLVED ${ATTN_ARCH})
if(ATTN_ARCH STREQUAL "auto")
  if(CMAKE_BUILD_TYPE STREQUAL "Debug" OR NOT attn_host_has_avx2_fma)
    set(ATTN_ARCH_RESOLVED generic)
  else()
    set(ATTN_ARCH_RESOLVED x86-64-v3)
  endif()
endif()
if(ATTN_ARCH_RESOLVED STREQUAL "x86-64-v3")
  if(NOT attn_targets_x86_64)
    message(FATAL_ERROR "ATTN_ARCH=x86-64-v3 needs an x86-64 target; this compiler targets "
                        "${CMAKE_SYSTEM_PROCESSOR} (use -DATTN_ARCH=generic or native)")
  endif()
  add_compile_options(-march=x86-64-v3)
elseif(ATTN_ARCH_RESOLVED STREQUAL "native")
  add_compile_options(-march=native)
endif()
set(ATTN_ARCH_RESOLVED ${ATTN_ARCH_RESOLVED} CACHE INTERNAL "the CPU target ATTN_ARCH chose")
# Only build_info.cpp sees the name, so changing it recompiles one file, not the project.
set_property(SOURCE ${CMAKE_SOURCE_DIR}/autograd/build_info.cpp APPEND
             PROPERTY COMPILE_DEFINITIONS ATTN_ARCH_NAME="${ATTN_ARCH_RESOLVED}"
                                  ATTN_VERSION="${PROJECT_VERSION}")
message(STATUS "attnlab: ATTN_ARCH=${ATTN_ARCH} -> ${ATTN_ARCH_RESOLVED} "
               "(target ${CMAKE_SYSTEM_PROCESSOR}, host AVX2+FMA ${attn_host_has_avx2_fma})")
