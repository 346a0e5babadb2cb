#include "experiments/common/peak_memory.h"

#include <malloc.h>

#include <fstream>

#include "autograd/kernels/buffer_pool.h"
#include "experiments/kit/kit.h"

namespace attn::experiments {

namespace {

int64_t status_kib(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1));
  return -1;
}

bool reset_resident_peak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace

PeakMemory::PeakMemory() {
  mallopt(M_MMAP_THRESHOLD, 1 << 20);  // fixed threshold: also turns off glibc's adaptive one
  resident_available_ = resident_bytes() > 0 && reset_resident_peak();
}

int64_t PeakMemory::resident_bytes() {
  return status_kib("VmRSS") * 1024;
}

int64_t PeakMemory::peak_bytes() {
  return status_kib("VmHWM") * 1024;
}

PeakUse PeakMemory::measure(const std::function<void()>& work) const {
  kernels::pool_trim();
  malloc_trim(0);
  PeakUse use;
  const int64_t live_before = kernels::pool_stats().live_bytes;
  const int64_t resident_before = resident_bytes();
  kernels::reset_pool_peak();
  if (resident_available_) reset_resident_peak();
  work();
  use.tensor_bytes = kernels::pool_stats().peak_live_bytes - live_before;
  if (resident_available_) use.resident_bytes = peak_bytes() - resident_before;
  return use;
}

}  // namespace attn::experiments
