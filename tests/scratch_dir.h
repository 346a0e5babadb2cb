// A scratch folder for tests that write files, removed when the test program exits.
//
//   std::filesystem::path dir = attn::testing::scratch_dir("checkpoint");
//   // -> $TMPDIR/attn_test_<pid>/checkpoint, created empty on first use
//
// Every folder of one test run lives under one per-process root, so parallel runs of the suite
// never share files, and the root is deleted at exit (a test that fails leaves nothing behind).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace attn::testing {

inline std::filesystem::path scratch_root() {
  struct Root {
    pid_t owner = ::getpid();
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("attn_test_" + std::to_string(owner));
    ~Root() {  // a forked child that exits normally must not delete its parent's files
      std::error_code ignored;
      if (::getpid() == owner) std::filesystem::remove_all(path, ignored);
    }
  };
  static const Root root;
  return root.path;
}

// The folder `name` under the per-process root: emptied and created on each call.
inline std::filesystem::path scratch_dir(const std::string& name) {
  const std::filesystem::path dir = scratch_root() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace attn::testing
