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
#
# The hand kernels do not depend on it: on x86-64 attn_add_isa_variants compiles them three times,
# for generic x86-64, x86-64-v3 (AVX2 + FMA) and x86-64-v4 (AVX-512), and the binary picks the
# widest the CPU runs at start-up (autograd/kernels/isa.h; ATTN_ISA forces one). ATTN_ARCH is
# then only the rest of the project's target: the autodiff ops, layers, optimizers and
# experiments, compiled by the compiler's own vectorisation. auto keeps x86-64-v3 for them on an
# AVX2 build machine (fastest there; such a binary still dies on a pre-AVX2 CPU), generic makes
# the portable binary. Whether the rest at the baseline costs anything is not measured yet
# (docs/performance.md, "One binary, the kernels per instruction set").
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

# attn_add_isa_variants(TARGET...): the kernel files of autograd/kernels (isa_variant.h) once per
# instruction set, each copy with -DATTN_ISA_NS=<its namespace> and its -march flag. The files
# themselves are the portable copy, with -march=x86-64 on x86 whatever ATTN_ARCH says (so
# ATTN_ISA=generic runs the code an SSE2-only CPU would); generated one-line wrappers in the
# build tree include them again for avx2 and avx512. Off x86-64 there is only the portable copy.
# Precompiled headers are skipped for them: a PCH made with other -march flags cannot be used.
set(attn_isa_kernel_files pack panel_gemm small_gemm philox row_stats vec_math gelu isa_table)
function(attn_add_isa_variants)
  foreach(name ${attn_isa_kernel_files})
    set(src ${CMAKE_SOURCE_DIR}/autograd/kernels/${name}.cpp)
    set_property(SOURCE ${src} APPEND PROPERTY COMPILE_DEFINITIONS ATTN_ISA_NS=generic)
    set_property(SOURCE ${src} PROPERTY SKIP_PRECOMPILE_HEADERS ON)
    if(attn_targets_x86_64)
      set_property(SOURCE ${src} APPEND PROPERTY COMPILE_OPTIONS -march=x86-64 -mtune=generic)
    endif()
  endforeach()
  if(NOT attn_targets_x86_64)
    return()
  endif()
  foreach(isa avx2 avx512)
    set(march x86-64-v3)
    if(isa STREQUAL "avx512")
      set(march x86-64-v4)
    endif()
    foreach(name ${attn_isa_kernel_files})
      set(copy ${CMAKE_BINARY_DIR}/isa/${isa}/${name}.cpp)
      file(CONFIGURE OUTPUT ${copy}
           CONTENT "#include \"autograd/kernels/${name}.cpp\"  // the ${isa} copy (cmake/arch.cmake)\n")
      set_property(SOURCE ${copy} APPEND PROPERTY COMPILE_DEFINITIONS ATTN_ISA_NS=${isa}
                                                                     ATTN_ISA_VARIANT_COPY)
      set_property(SOURCE ${copy} APPEND PROPERTY COMPILE_OPTIONS -march=${march} -mtune=generic)
      set_property(SOURCE ${copy} PROPERTY SKIP_PRECOMPILE_HEADERS ON)
      foreach(target ${ARGN})
        target_sources(${target} PRIVATE ${copy})
      endforeach()
    endforeach()
  endforeach()
  foreach(target ${ARGN})
    target_compile_definitions(${target} PRIVATE ATTN_ISA_X86_VARIANTS)
  endforeach()
endfunction()
