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
// slack). A request the cache cannot serve first frees the buffers of every size class that
// has not been asked for in kPoolIdleRequests requests, so with shapes that vary from step to
// step (random sequence lengths) the pool keeps what the recent steps use instead of a buffer
// of every size it ever met, while a steady loop's own buffers are never evicted. Buffers above
// kPoolMaxBuffer bytes and anything beyond kPoolMaxCached cached bytes per thread go straight back
// to the system. ATTN_NO_POOL=1 turns the cache off (plain aligned malloc/free), and so do
// AddressSanitizer builds, where reuse would hide use-after-free bugs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn::kernels {

inline constexpr int64_t kPoolMaxBuffer = int64_t{256} << 20;  // larger buffers are not cached
inline constexpr int64_t kPoolMaxCached = int64_t{1} << 30;    // per-thread cache limit
// A size class not requested in this many of a thread's requests is idle: its cached buffers
// are freed at the thread's next miss. A training step makes hundreds to a few thousand
// requests, so this is several steps of a real model and far more than one.
inline constexpr int64_t kPoolIdleRequests = int64_t{1} << 14;

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
