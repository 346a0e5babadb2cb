// The buffer pool behind every Tensor: reuse, accounting, and that reuse never leaks old values
// into tensors that promise zeros.
#include <doctest/doctest.h>

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "autograd/kernels/buffer_pool.h"
#include "autograd/tensor.h"

namespace attn {

TEST_SUITE("autograd") {
  TEST_CASE("a released buffer is handed out again for a request of the same size class") {
    if (!kernels::pool_enabled()) return;  // ATTN_NO_POOL=1 or an ASan build: plain malloc
    void* a = kernels::pool_allocate(1000);
    kernels::pool_release(a, 1000);
    const int64_t hits = kernels::pool_stats().hits;
    void* b = kernels::pool_allocate(1001);  // 1000 and 1001 bytes round to one class (1024)
    CHECK(b == a);
    CHECK(kernels::pool_stats().hits == hits + 1);
    void* c = kernels::pool_allocate(5000);  // a different class: not the same buffer
    CHECK(c != a);
    kernels::pool_release(b, 1001);
    kernels::pool_release(c, 5000);
  }

  TEST_CASE("live and peak bytes follow tensor storage, rounded to the size class") {
    kernels::reset_pool_peak();
    const int64_t live = kernels::pool_stats().live_bytes;
    {
      Tensor t = Tensor::empty({1000});  // 4000 bytes -> class 4096 (3584 < 4000 <= 4096)
      CHECK(kernels::pool_stats().live_bytes == live + 4096);
      Tensor u = t;  // shares storage: no new bytes
      CHECK(kernels::pool_stats().live_bytes == live + 4096);
    }
    CHECK(kernels::pool_stats().live_bytes == live);
    CHECK(kernels::pool_stats().peak_live_bytes == live + 4096);
  }

  TEST_CASE("zeros are zeros even when the buffer is reused") {
    { Tensor::full({64}, 7.0f); }  // leaves a buffer of 7s in the cache
    Tensor z = Tensor::zeros({64});
    for (int64_t i = 0; i < z.numel(); ++i) CHECK(z[i] == 0);
  }

  // The soak test's finding (docs/reliability.md): with varying shapes the cache kept idle
  // buffers of every size ever met. A miss now gives back idle bytes first, so live + cached
  // stays below the largest working set plus one buffer, however many sizes pass through.
  TEST_CASE("varying sizes do not pile up idle buffers: a miss gives back idle bytes first") {
    if (!kernels::pool_enabled()) return;
    kernels::pool_trim();
    int64_t most = 0;  // the largest footprint of one "step"
    for (int step = 0; step < 200; ++step) {
      std::vector<std::pair<void*, int64_t>> live;
      int64_t bytes = 0;
      for (int i = 0; i < 4; ++i) {  // four buffers of 4 KB .. 400 KB, changing every step
        const int64_t b = 4096 * (1 + (step * 7 + i * 13) % 97);
        live.emplace_back(kernels::pool_allocate(b), b);
        bytes += b;
      }
      most = std::max(most, bytes);
      for (auto [p, b] : live) kernels::pool_release(p, b);
      // size classes round up by at most 25%; plus one buffer of the largest class (448 KB)
      CHECK(kernels::pool_stats().cached_bytes <= most * 5 / 4 + 448 * 1024);
    }
    kernels::pool_trim();
  }

  TEST_CASE("a tensor may be freed on another thread than the one that made it") {
    const int64_t live = kernels::pool_stats().live_bytes;
    Tensor t = Tensor::ones({4096});
    std::thread other([moved = std::move(t)]() mutable { moved = Tensor(); });
    other.join();
    CHECK(kernels::pool_stats().live_bytes == live);
  }
}

}  // namespace attn
