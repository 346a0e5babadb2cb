#include "experiments/cli/openmp_spin.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace attn::experiments {
namespace {

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

void bound_openmp_spin(char** argv) {
  if (openmp_spin_bounded() || env_is("ATTN_OPENMP_SPIN", "1") || debugger_attached()) return;
  ::setenv("GOMP_SPINCOUNT", kBoundedSpinCount, 1);
  ::execv("/proc/self/exe", argv);  // returns only on failure: carry on with the default
}

}  // namespace attn::experiments
