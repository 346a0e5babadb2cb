# Precompiled headers: the standard headers and fmt that most files include, parsed once per
# target instead of once per file. Only third-party headers go in (never attnlab's own, which
# change while you work and would rebuild every file). Measured with g++ 12 at -O3 (user time
# per file): a small op file 0.75 s -> 0.37 s, nn/linear.cpp 1.23 s -> 0.77 s, a large
# experiment 5.55 s -> 5.33 s; about a fifth off each full build, which matters most for
# scripts/test's four trees (Release, Debug, generic, the clang fuzz tree).
#   cmake -DATTN_PCH=OFF ...   to build without them (e.g. to check that a file includes what it
#                              uses: with them on, a missing #include <vector> goes unnoticed)
# With ccache (cmake/ccache.cmake) they are off by default: GCC's .gch files are not
# reproducible, so every tree (a clean clone, a worktree, CI) would build its own and every
# object including it would miss the cache; a cache hit saves far more than the PCH does.
if(ATTN_USING_CCACHE)
  set(attn_pch_default OFF)
else()
  set(attn_pch_default ON)
endif()
option(ATTN_PCH "Precompile the common standard and fmt headers" ${attn_pch_default})
if(NOT ATTN_PCH)
  return()
endif()
set(ATTN_PCH_HEADERS <algorithm> <cmath> <cstdint> <functional> <map> <memory> <optional>
                     <string> <vector> <fmt/format.h>)
foreach(t attn_autograd attn_autograd_f64 attn_nn attn_nn_f64 attn_data attn_train
          attn_experiments attn_bench)
  if(TARGET ${t})
    get_target_property(kind ${t} TYPE)
    if(NOT kind STREQUAL "INTERFACE_LIBRARY")
      target_precompile_headers(${t} PRIVATE ${ATTN_PCH_HEADERS})
    endif()
  endif()
endforeach()
# The test programs also share doctest. doctest_main.cpp defines DOCTEST_CONFIG_IMPLEMENT before
# it includes doctest, which a precompiled doctest would bypass, so it is left out.
foreach(t attn_tests attn_gradcheck)
  if(TARGET ${t})
    target_precompile_headers(${t} PRIVATE ${ATTN_PCH_HEADERS} <doctest/doctest.h>)
  endif()
endforeach()
set_source_files_properties(${CMAKE_SOURCE_DIR}/tests/doctest_main.cpp
                            PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
