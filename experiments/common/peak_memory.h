// How much memory a piece of work needs at its peak, counted two ways.
//
//   attn::experiments::PeakMemory probe;
//   attn::experiments::PeakUse use = probe.measure([&] { forward_and_backward(); });
//   use.tensor_bytes;    // most tensor memory alive at once (the buffer pool's own count)
//   use.resident_bytes;  // what the OS saw: the process's resident high-water mark, minus before
//
// tensor_bytes is exact and repeatable: autograd's buffer pool (autograd/kernels/buffer_pool.h)
// counts every live tensor byte and keeps a high-water mark. resident_bytes also sees memory
// outside tensors (per-thread scratch, the tape's records): Linux keeps the resident high-water
// mark (VmHWM in /proc/self/status) and resets it when "5" is written to /proc/self/clear_refs.
// Before each measurement the pool's cache is emptied and malloc is asked to serve every block
// >= 1 MiB by mmap, so freed buffers really leave the process and each measurement starts clean.
#pragma once

#include <cstdint>
#include <functional>

namespace attn::experiments {

struct PeakUse {
  int64_t tensor_bytes = 0;
  int64_t resident_bytes = -1;  // -1 when the OS measurement is not available
};

class PeakMemory {
 public:
  PeakMemory();
  // False when /proc/self/clear_refs cannot be written (not Linux, or restricted).
  bool resident_available() const { return resident_available_; }
  PeakUse measure(const std::function<void()>& work) const;

  static int64_t resident_bytes();  // VmRSS
  static int64_t peak_bytes();      // VmHWM

 private:
  bool resident_available_ = false;
};

}  // namespace attn::experiments
