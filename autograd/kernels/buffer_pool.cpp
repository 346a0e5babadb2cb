#include "autograd/kernels/buffer_pool.h"

#include <algorithm>
#include <atomic>
#include <bit>
#if defined(__GLIBC__)
#include <malloc.h>  // malloc_trim
#endif
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace attn::kernels {

namespace {

constexpr int64_t kAlign = 64;
constexpr int kClasses = 4 * 64;

// Size classes: multiples of 64 up to 256 bytes, then four per power of two (5/4, 6/4, 7/4, 8/4
// of the power below), so a rounded size is at most 25% larger than the request.
struct SizeClass {
  int index;
  int64_t bytes;
};

SizeClass size_class(int64_t bytes) {
  if (bytes <= 4 * kAlign) {
    const int64_t m = std::max<int64_t>(1, (bytes + kAlign - 1) / kAlign);  // 1..4
    return {static_cast<int>(m - 1), m * kAlign};
  }
  const int k = std::bit_width(static_cast<uint64_t>(bytes - 1)) - 1;  // 2^k < bytes <= 2^(k+1)
  const int64_t step = int64_t{1} << (k - 2);
  const int64_t m = (bytes + step - 1) / step;  // 5..8
  return {4 * (k - 7) + static_cast<int>(m - 5) + 4, m * step};
}

// The bytes of class `index` (size_class's inverse).
int64_t class_bytes(int index) {
  if (index < 4) return (index + 1) * kAlign;
  const int k = (index - 4) / 4 + 7;
  return ((index - 4) % 4 + 5) * (int64_t{1} << (k - 2));
}

// GCC defines __SANITIZE_ADDRESS__ under -fsanitize=address; clang (the fuzz build) answers
// __has_feature(address_sanitizer) instead.
#if defined(__SANITIZE_ADDRESS__)
#define ATTN_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTN_UNDER_ASAN 1
#endif
#endif

bool compute_enabled() {
#if defined(ATTN_UNDER_ASAN)
  return false;
#else
  const char* env = std::getenv("ATTN_NO_POOL");
  return !(env && *env && std::strcmp(env, "0") != 0);
#endif
}

const bool g_enabled = compute_enabled();
std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};

// Buffers of kLendFrom bytes or more may be lent to a request of a smaller class (at most
// kLendClasses classes smaller, so at most 2x the request's size). The caller releases a buffer
// with its request's size, so such a buffer carries its real class in a 64-byte header in front
// of the data (under 2% of the smallest such buffer). Whether a buffer has the header depends
// on its request's size alone, so every thread frees it the same way.
constexpr int64_t kLendFrom = 4096;
constexpr int kLendClasses = 4;

bool lendable(int64_t class_bytes) {
  return g_enabled && class_bytes >= kLendFrom && class_bytes <= kPoolMaxBuffer;
}

void* new_buffer(int index) {
  const int64_t bytes = class_bytes(index);
  if (!lendable(bytes)) return std::aligned_alloc(kAlign, static_cast<size_t>(bytes));
  auto* base = static_cast<char*>(std::aligned_alloc(kAlign, static_cast<size_t>(bytes + kAlign)));
  if (!base) return nullptr;
  std::memcpy(base, &index, sizeof index);
  return base + kAlign;
}

// The class of a buffer handed out for a request of class c: c's, or the lender's.
int buffer_class(void* p, SizeClass c) {
  if (!lendable(c.bytes)) return c.index;
  int index = 0;
  std::memcpy(&index, static_cast<char*>(p) - kAlign, sizeof index);
  return index;
}

void delete_buffer(void* p, int index) {
  std::free(lendable(class_bytes(index)) ? static_cast<char*>(p) - kAlign : p);
}

struct ThreadCache {
  std::vector<void*> free_lists[kClasses];
  int64_t cached = 0, hits = 0, misses = 0;
  int64_t given_back = 0;  // bytes freed by shrink() since the last malloc_trim
  // The demand of each size class: buffers of it handed out now (by this thread, minus those
  // this thread got back), and the most handed out at once in each of the last kPoolEpochs
  // epochs (a ring; `epoch` is the current slot).
  int64_t out[kClasses] = {};
  int64_t peak[kPoolEpochs][kClasses] = {};
  int epoch = 0;
  int64_t requests = 0;  // in the current epoch

  void trim() {
    for (int i = 0; i < kClasses; ++i) {
      for (void* p : free_lists[i]) delete_buffer(p, i);
      free_lists[i].clear();
    }
    cached = 0;
  }
  // Counts a request (before it is served, so an epoch's end sees the demand as it was and
  // cannot free the buffer this request is about to reuse).
  void tick() {
    if (++requests >= kPoolEpochRequests) shrink();
  }
  // A buffer of class i goes out (the demand is counted by the buffer's class, lent or not).
  void hand_out(int i) {
    ++out[i];
    peak[epoch][i] = std::max(peak[epoch][i], out[i]);
  }
  // The end of an epoch: every class keeps at most as many free buffers as its recent demand can
  // use, i.e. the largest peak in the ring (the last kPoolEpochs epochs) minus what is out now;
  // the rest is freed. So the cache follows what the recent steps needed. Two rules came before
  // this one. (1) Free the largest buffers on any miss: it evicted the step's own buffers, which
  // then missed in turn (W1 35% slower). (2) On a miss, free only the classes nobody asked for
  // in an epoch: a class that stays in use kept every buffer it ever held, so with random
  // sequence lengths each class's cache ratcheted up to the largest demand the run had ever
  // met (an evaluation's batch, a rare long sequence), and the soak's RSS crept up 9% over
  // 30,000 steps; and eviction waited for a miss, so when it happened was a matter of chance.
  // A steady loop's demand repeats every step, so its buffers are never freed.
  void shrink() {
    requests = 0;
    const int next = (epoch + 1) % kPoolEpochs;
    for (int i = 0; i < kClasses; ++i) {
      int64_t demand = 0;
      for (const auto& p : peak) demand = std::max(demand, p[i]);
      const int64_t keep = std::max<int64_t>(0, demand - std::max<int64_t>(0, out[i]));
      auto& list = free_lists[i];
      if (static_cast<int64_t>(list.size()) > keep) {
        const int64_t surplus = static_cast<int64_t>(list.size()) - keep;
        for (int64_t k = 0; k < surplus; ++k) delete_buffer(list[list.size() - 1 - k], i);
        list.resize(list.size() - surplus);
        cached -= surplus * class_bytes(i);
        given_back += surplus * class_bytes(i);
      }
      peak[next][i] = std::max<int64_t>(0, out[i]);
    }
    epoch = next;
    // free() keeps the pages of a chunk in the middle of the heap: the process's RSS stays at
    // the heap's high-water mark and creeps up as the layout shifts (the soak test measured
    // +3% over 8,000 steps with the live heap flat). So whenever an epoch gave buffers back,
    // hand the free pages to the system (at most once per epoch of kPoolEpochRequests
    // requests, a few training steps of a small model). Waiting for a megabyte left the last few
    // hundred kilobytes resident and the RSS 0.5 MB higher late in a run.
    if (given_back > 0) {
      given_back = 0;
#if defined(__GLIBC__)
      malloc_trim(0);
#endif
    }
  }
  ~ThreadCache();
};

// The cache lives as long as its thread. A buffer freed after the cache is gone (a static
// tensor destroyed at exit) goes straight to free(): t_cache is a plain pointer, so reading it
// during exit is safe, and the destructor resets it.
thread_local ThreadCache* t_cache = nullptr;
thread_local bool t_cache_dead = false;

ThreadCache::~ThreadCache() {
  trim();
  t_cache = nullptr;
  t_cache_dead = true;
}

ThreadCache* cache() {
  if (!t_cache && !t_cache_dead) {
    thread_local ThreadCache instance;
    t_cache = &instance;
  }
  return t_cache;
}

void count_live(int64_t delta) {
  const int64_t now = g_live.fetch_add(delta, std::memory_order_relaxed) + delta;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

bool pool_enabled_impl() {
  return g_enabled;
}

// Both directions take `counted`: tensor data counts towards live/peak bytes, objects do not.
void* allocate(int64_t bytes, bool counted) {
  const SizeClass c = size_class(bytes);
  if (counted) count_live(c.bytes);
  ThreadCache* tc = g_enabled && c.bytes <= kPoolMaxBuffer ? cache() : nullptr;
  if (tc) {
    tc->tick();
    // The request's own class first, then (for lendable sizes) up to kLendClasses larger ones.
    // Lending is what keeps varying shapes from caching a set of buffers per shape: with random
    // sequence lengths, a step whose longest sequence is rare (14 instead of the usual 16)
    // borrows the usual length's free buffers instead of allocating a tape of its own, which
    // the cache then held for the whole demand window (docs/reliability.md, section 4).
    const int last = lendable(c.bytes) ? std::min(kClasses - 1, c.index + kLendClasses) : c.index;
    for (int j = c.index; j <= last; ++j) {
      auto& list = tc->free_lists[j];
      if (list.empty()) continue;
      void* p = list.back();
      list.pop_back();
      tc->cached -= class_bytes(j);
      tc->hand_out(j);
      ++tc->hits;
      return p;
    }
    ++tc->misses;
  }
  void* p = new_buffer(c.index);
  if (!p && counted) count_live(-c.bytes);  // the caller reports the failure
  if (p && tc) tc->hand_out(c.index);
  return p;
}

void release(void* p, int64_t bytes, bool counted) {
  if (!p) return;
  const SizeClass c = size_class(bytes);
  if (counted) count_live(-c.bytes);
  const int index = buffer_class(p, c);
  const int64_t real = class_bytes(index);
  ThreadCache* tc = g_enabled && c.bytes <= kPoolMaxBuffer ? cache() : nullptr;
  if (tc) --tc->out[index];
  if (tc && tc->cached + real <= kPoolMaxCached) {
    tc->free_lists[index].push_back(p);
    tc->cached += real;
    return;
  }
  delete_buffer(p, index);
}

}  // namespace

void* pool_allocate(int64_t bytes) {
  return allocate(bytes, true);
}
void pool_release(void* p, int64_t bytes) {
  release(p, bytes, true);
}
void* pool_allocate_object(int64_t bytes) {
  void* p = allocate(bytes, false);
  if (!p) throw std::bad_alloc();
  return p;
}
void pool_release_object(void* p, int64_t bytes) {
  release(p, bytes, false);
}

bool pool_enabled() {
  return pool_enabled_impl();
}

PoolStats pool_stats() {
  PoolStats s;
  s.live_bytes = g_live.load(std::memory_order_relaxed);
  s.peak_live_bytes = g_peak.load(std::memory_order_relaxed);
  if (const ThreadCache* tc = g_enabled ? cache() : nullptr) {
    s.cached_bytes = tc->cached;
    s.hits = tc->hits;
    s.misses = tc->misses;
  }
  return s;
}

void reset_pool_peak() {
  g_peak.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void pool_trim() {
  if (ThreadCache* tc = g_enabled ? cache() : nullptr) {
    tc->trim();
    tc->given_back = 0;
#if defined(__GLIBC__)
    malloc_trim(0);  // the freed buffers' pages go back to the system, not just to the heap
#endif
  }
}

}  // namespace attn::kernels
