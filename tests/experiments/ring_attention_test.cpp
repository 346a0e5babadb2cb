// ring_attention over ranks that are threads (tests/train/distributed/thread_group.h): the
// output and the gradients of the ring equal float64 attention over the whole sequence, for
// 1, 2 and 3 ranks and query tiles that do not divide the block; each rank sends the formula's
// bytes, and the MPI-free ring of one sends none.
#include <doctest/doctest.h>

#include <mutex>

#include "autograd/generator.h"
#include "experiments/efficient/ring_attention_op.h"
#include "experiments/efficient/ring_attention_reference.h"
#include "tests/train/distributed/thread_group.h"

namespace attn::experiments {

namespace {

constexpr int64_t kHeads = 2, kT = 24, kD = 8;

struct Full {
  Tensor q, k, v, d_out;
};

Full random_inputs() {
  Generator gen(5);
  return {Tensor::randn({kHeads, kT, kD}, gen), Tensor::randn({kHeads, kT, kD}, gen),
          Tensor::randn({kHeads, kT, kD}, gen), Tensor::randn({kHeads, kT, kD}, gen)};
}

// The largest gap between this rank's block of the ring's values and the float64 reference.
double block_gap(const Tensor& block, const std::vector<double>& whole, int rank, int ranks) {
  const int64_t tb = kT / ranks, c = block.size(2);
  double gap = 0;
  for (int64_t h = 0; h < kHeads; ++h)
    for (int64_t i = 0; i < tb * c; ++i)
      gap = std::max(gap, std::abs(block[h * tb * c + i] -
                                   whole[static_cast<size_t>((h * kT + rank * tb) * c + i)]));
  return gap;
}

}  // namespace

TEST_SUITE("experiments") {
  TEST_CASE("ring_attention over 1, 2 and 3 thread ranks equals float64 attention") {
    const Full in = random_inputs();
    const AttentionValues exact = attention_in_double(in.q, in.k, in.v, in.d_out);
    for (const int ranks : {1, 2, 3}) {
      CAPTURE(ranks);
      std::mutex lock;
      double worst = 0;
      train::distributed::testing::ThreadGroup group(ranks);
      group.run([&](train::distributed::Communicator& comm) {
        const int r = comm.rank();
        const Var q = Var::parameter(block_of_rank(in.q, r, ranks)),
                  k = Var::parameter(block_of_rank(in.k, r, ranks)),
                  v = Var::parameter(block_of_rank(in.v, r, ranks));
        RingCounters sent;
        const Var o = ring_attention(q, k, v, comm, /*query_rows=*/5, &sent);
        sum(mul(o, Var::constant(block_of_rank(in.d_out, r, ranks)))).backward();
        const RingCounters formula = ring_bytes_formula(kHeads, kT / ranks, kD, kD, ranks);
        const std::lock_guard<std::mutex> hold(lock);
        CHECK(sent.forward_bytes == formula.forward_bytes);
        CHECK(sent.backward_bytes == formula.backward_bytes);
        for (const double gap :
             {block_gap(o.value(), exact.o, r, ranks), block_gap(q.grad(), exact.dq, r, ranks),
              block_gap(k.grad(), exact.dk, r, ranks), block_gap(v.grad(), exact.dv, r, ranks)})
          worst = std::max(worst, gap);
      });
      // float32 sums of 24 terms of order 1: a few ulps of 1.
      CHECK(worst < 1e-5);
    }
  }

  TEST_CASE("ring_attention alone: a ring of one sends nothing and refuses bad shapes") {
    const Full in = random_inputs();
    auto alone = train::distributed::make_single_process();
    RingCounters sent{1, 1};
    const Var o = ring_attention(Var::parameter(in.q), Var::parameter(in.k), Var::parameter(in.v),
                                 *alone, 64, &sent);
    sum(mul(o, Var::constant(in.d_out))).backward();
    CHECK(sent.forward_bytes == 0);
    CHECK(sent.backward_bytes == 0);
    CHECK_THROWS_WITH_AS(
        ring_attention(Var::constant(in.q), Var::constant(Tensor::zeros({2, 5, 8})),
                       Var::constant(in.v), *alone),
        doctest::Contains("ring_attention: q, k need the same shape"), Error);
  }
}

}  // namespace attn::experiments
