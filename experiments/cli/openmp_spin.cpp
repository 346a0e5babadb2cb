#include "experiments/cli/openmp_spin.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "train/distributed/communicator.h"

namespace attn::experiments {
namespace {

char** g_argv = nullptr;  // main's argv, for the exec

// /proc/self/status has "TracerPid:\t<pid>", 0 when no debugger (or strace) is attached.
bool debugger_attached() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("TracerPid:", 0) == 0) return std::stol(line.substr(10)) != 0;
  return false;
}

bool env_is(const char* name, const std::string& value) {
  const char* v = std::getenv(name);
  return v != nullptr && value == v;
}

}  // namespace

bool openmp_spin_bounded() {
  return std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr;
}

void remember_command_line(char** argv) {
  g_argv = argv;
  if (train::distributed::launcher_world_size() > 0) bound_openmp_spin();
}

void bound_openmp_spin() {
  if (g_argv == nullptr || openmp_spin_bounded() || env_is("ATTN_OPENMP_SPIN", "1") ||
      debugger_attached())
    return;
  ::setenv("GOMP_SPINCOUNT", kBoundedSpinCount, 1);
  std::fflush(nullptr);  // (nothing should be pending; if it is, it is written once, not lost)
  ::execv("/proc/self/exe", g_argv);  // returns only on failure: carry on with the default
}

}  // namespace attn::experiments
