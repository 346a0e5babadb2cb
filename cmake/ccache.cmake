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
#   -fdebug-prefix-map  Debug objects name the checkout /ATTNLAB_SOURCE instead of its path, so
#                      the Debug trees of clones at different paths (CI's clean clone) share
#                      their objects too; tools/gdb (scripts/gdb, the Debug build's auto-load
#                      file) maps /ATTNLAB_SOURCE back to the checkout it is loaded from.
option(ATTN_CCACHE "Compile through ccache when it is installed" ON)
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  add_compile_options(-fdebug-prefix-map=${CMAKE_SOURCE_DIR}=/ATTNLAB_SOURCE)
endif()
find_program(ATTN_CCACHE_PROGRAM ccache)
if(ATTN_CCACHE AND ATTN_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # A Debug object records its build folder (DW_AT_comp_dir): one made in another clone would
  # send gdb to that clone's sources (tests/cli/gdb_printers.sh saw source lines vanish), so
  # the Debug tree asks for its folder to be hashed in. With the prefix map above, ccache leaves
  # a folder under CCACHE_BASEDIR out of the hash (`man ccache`, hash_dir): the objects name
  # /ATTNLAB_SOURCE whatever the clone, and every clone shares them; a build folder outside the
  # checkout is still hashed. (The fuzz tree's -g only serves sanitizer reports.)
  if(CMAKE_BUILD_TYPE STREQUAL "Debug")
    set(attn_ccache_hash_dir CCACHE_HASHDIR=true)
  else()
    set(attn_ccache_hash_dir CCACHE_NOHASHDIR=true)
  endif()
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} ${attn_ccache_hash_dir}
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      ${ATTN_CCACHE_PROGRAM})
  set(ATTN_USING_CCACHE ON)
  message(STATUS "attnlab: compiling through ${ATTN_CCACHE_PROGRAM} (-DATTN_CCACHE=OFF: without)")
endif()
