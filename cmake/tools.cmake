# tools/: small programs the test scripts drive (not part of any library).
#   attn_optim_dump  optimizer steps for tests/parity/check_optim.py
add_executable(attn_optim_dump ${CMAKE_SOURCE_DIR}/tools/optim_dump.cpp)
target_link_libraries(attn_optim_dump PRIVATE attn_train attn_nn attn_data attn_autograd)
#   attn_attention_memory  peak memory of blockwise vs materialised attention (docs/performance.md)
add_executable(attn_attention_memory ${CMAKE_SOURCE_DIR}/tools/attention_memory.cpp)
target_link_libraries(attn_attention_memory PRIVATE attn_nn attn_autograd)
#   <program>-gdb.py  Debug builds only: gdb auto-loads attnlab's pretty-printers and xmethods
#                     (tools/gdb/) from this file next to the program, once the build folder is
#                     trusted (`add-auto-load-safe-path`, see docs/autodiff.md; scripts/gdb
#                     loads them without it).
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  # Variadic templates (fmt::format's argument packs) make GCC emit location lists even at -O0,
  # and gdb trusts a compile unit with location lists to describe its variables at a function's
  # first instruction: `break TrilMatmulOp::backward` then stopped before the prologue had
  # stored `this`, and `p *this` / `p dy()` showed garbage (in 127 of 203 objects). Without var
  # tracking (which -O0 has no use for) gdb stops after the prologue, as in every other unit.
  # CMAKE_CXX_FLAGS_DEBUG is read at the end of the directory, so this reaches every target.
  string(APPEND CMAKE_CXX_FLAGS_DEBUG " -fno-var-tracking")
  foreach(prog attnlab attn_tests attn_gradcheck)
    if(TARGET ${prog})
      file(GENERATE OUTPUT $<TARGET_FILE:${prog}>-gdb.py
           CONTENT "import sys\nsys.path.insert(0, '${CMAKE_SOURCE_DIR}/tools/gdb')\nimport attnlab_gdb\nattnlab_gdb.register()\n")
    endif()
  endforeach()
endif()
