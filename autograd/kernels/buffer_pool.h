// A per-thread cache of tensor buffers, so a training loop stops paying for malloc/free.
//
//   void* p = attn::kernels::pool_allocate(bytes);  // 64-byte aligned, >= bytes
//   attn::kernels::pool_release(p, bytes);           // same bytes: back into this thread's cache
//   attn::kernels::pool_stats().peak_live_bytes;     // high-water mark of tensor memory
//
// Every Tensor's Storage comes from here. A training step allocates the same sizes every step
// (the same ops on the same shapes), so after the first step every request is served from a
// free list: no malloc, no page faults on fresh memory, no heap fragmentation from aligned
// allocations. Sizes are rounded up to a class (four classes per power of two, at most 25%
// slack). Each size class keeps at most as many free buffers as its recent demand: the most
// buffers of it that were out at once in any of the last kPoolEpochs epochs (an epoch is
// kPoolEpochRequests of the thread's requests); the surplus is freed at the end of every epoch.
// So with shapes that vary from step to step (random sequence lengths) the cache follows what
// the recent steps use instead of growing to the most a class was ever asked for, while a
// steady loop's own buffers are never evicted. Buffers above
// kPoolMaxBuffer bytes and anything beyond kPoolMaxCached cached bytes per thread go straight back
// to the system. ATTN_NO_POOL=1 turns the cache off (plain aligned malloc/free), and so do
// AddressSanitizer builds, where reuse would hide use-after-free bugs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn::kernels {

inline constexpr int64_t kPoolMaxBuffer = int64_t{256} << 20;  // larger buffers are not cached
inline constexpr int64_t kPoolMaxCached = int64_t{1} << 30;    // per-thread cache limit
// The cache of each size class is bounded by the class's recent demand: the most buffers of it
// out at once in any of the last kPoolEpochs epochs of kPoolEpochRequests requests each. A
// training step makes hundreds to a few thousand requests, so the window is tens of steps.
inline constexpr int64_t kPoolEpochRequests = int64_t{1} << 13;
inline constexpr int kPoolEpochs = 16;

void* pool_allocate(int64_t bytes);
void pool_release(void* p, int64_t bytes);
// The same cache for small bookkeeping objects (a Storage and its shared_ptr control block):
// not counted in live/peak bytes, which measure tensor data only.
void* pool_allocate_object(int64_t bytes);
void pool_release_object(void* p, int64_t bytes);

// A std allocator over the pool, for std::allocate_shared.
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(pool_allocate_object(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { pool_release_object(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
};

struct PoolStats {
  int64_t live_bytes = 0;       // tensor memory in use now (all threads, rounded sizes)
  int64_t peak_live_bytes = 0;  // the most that was in use at once since the last reset
  int64_t cached_bytes = 0;     // this thread's free buffers kept for reuse
  int64_t hits = 0;             // this thread's requests served from the cache
  int64_t misses = 0;           // ... and those that went to malloc
};
PoolStats pool_stats();
// Starts a new high-water mark at the current live bytes (e.g. before one benchmark).
void reset_pool_peak();
// Frees this thread's cached buffers (live tensors are untouched).
void pool_trim();
// False when ATTN_NO_POOL=1 or under AddressSanitizer.
bool pool_enabled();

}  // namespace attn::kernels
