# Compiler cache. scripts/test compiles the project four times (Release, Debug, the generic tree
# and the clang fuzz tree); after a change to one layer, most of those files are unchanged and
# ccache returns their objects instead of compiling them again. Used when `ccache` is installed
# (scripts/setup --test installs it) and no launcher was chosen on the command line.
#   cmake -DATTN_CCACHE=OFF ...    to compile every file (e.g. to time a cold build)
# The settings travel with the build instead of living in ~/.config/ccache:
#   CCACHE_BASEDIR     paths under the checkout are hashed relative to it, so two clones of the
#                      same commit (a worktree, CI's clean clone) share their objects;
#   CCACHE_SLOPPINESS  what ccache must ignore for GCC's precompiled headers to be cacheable
#                      (the PCH's defines and timestamps), when -DATTN_PCH=ON is asked for: with
#                      ccache the precompiled headers are off by default (cmake/pch.cmake).
# Trees built with -g (Debug, RelWithDebInfo) keep ccache's default of hashing the build folder,
# since the debug information records it and gdb reads the sources through it.
option(ATTN_CCACHE "Compile through ccache when it is installed" ON)
find_program(ATTN_CCACHE_PROGRAM ccache)
if(ATTN_CCACHE AND ATTN_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      ${ATTN_CCACHE_PROGRAM})
  set(ATTN_USING_CCACHE ON)
  message(STATUS "attnlab: compiling through ${ATTN_CCACHE_PROGRAM} (-DATTN_CCACHE=OFF: without)")
endif()
