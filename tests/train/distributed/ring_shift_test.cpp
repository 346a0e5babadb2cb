// Communicator::ring_shift: every rank's values arrive at the next rank (rank r receives rank
// r - 1's, rank 0 the last rank's), N shifts bring a block home, the byte count is what crossed
// to another rank, and a ring of one hands a process its own values without counting a byte.
#include <doctest/doctest.h>

#include <vector>

#include "autograd/error.h"
#include "tests/train/distributed/thread_group.h"
#include "train/distributed/communicator.h"

namespace attn::train::distributed {

namespace {

using testing::ThreadGroup;

// Rank r's block: r * 100 + i, so a received block names its sender.
std::vector<float> block_of(int rank, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(rank * 100 + static_cast<int>(i));
  return v;
}

}  // namespace

TEST_SUITE("train") {
  TEST_CASE("ring_shift: each rank receives the previous rank's block; N shifts bring it home") {
    constexpr int kRanks = 3;
    constexpr size_t kValues = 5;
    ThreadGroup group(kRanks);
    group.run([&](Communicator& comm) {
      std::vector<float> held = block_of(comm.rank(), kValues), incoming(kValues);
      for (int step = 1; step <= kRanks; ++step) {
        comm.ring_shift(held, incoming, "test block");
        held.swap(incoming);
        const int sender = (comm.rank() - step % kRanks + kRanks) % kRanks;  // origin of the block
        CHECK(held == block_of(sender, kValues));
      }
      CHECK(held == block_of(comm.rank(), kValues));
      CHECK(comm.ring_bytes_sent() == kRanks * kValues * sizeof(float));
    });
  }

  TEST_CASE("ring_shift: a ring of one copies the values and sends nothing") {
    auto alone = make_single_process();
    const std::vector<float> mine{1.5f, -2.0f, 3.25f};
    std::vector<float> back(3, 0.0f);
    alone->ring_shift(mine, back, "ring of one");
    CHECK(back == mine);
    CHECK(alone->ring_bytes_sent() == 0);
  }

  TEST_CASE("ring_shift: mismatched or overlapping buffers are refused, naming the call") {
    auto alone = make_single_process();
    std::vector<float> a(4), b(3);
    CHECK_THROWS_WITH_AS(alone->ring_shift(a, b, "block 7"),
                         doctest::Contains("ring_shift during block 7: 4 values to send"), Error);
    CHECK_THROWS_WITH_AS(alone->ring_shift(std::span<const float>(a.data(), 3),
                                           std::span<float>(a.data() + 1, 3), "block 8"),
                         doctest::Contains("overlap"), Error);
  }
}

}  // namespace attn::train::distributed
