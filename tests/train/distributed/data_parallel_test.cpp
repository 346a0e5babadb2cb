// Data parallelism without MPI: the ranks are threads (thread_group.h) running the same code
// as `mpirun -np N attnlab train` (GradientSync, all_or_none, require_same_options). The
// gradient of a batch split over N ranks must be the gradient of the whole batch.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "autograd/error.h"
#include "autograd/kernels/parallel.h"
#include "data/stream.h"
#include "tests/train/distributed/thread_group.h"
#include "train/distributed/data_parallel.h"
#include "train/run/task_model.h"
#include "train/run/task_setup.h"

namespace attn::train::distributed {

namespace {

using testing::ThreadGroup;

TrainConfig tiny_reversal(const std::string& model) {
  TrainConfig c;
  c.model = model;
  c.d_model = 16;
  c.nhead = 2;
  c.num_layers = 1;
  c.dim_ff = 32;
  c.hidden = 16;
  c.min_len = 1;  // lengths 1..12: slices of a batch hold different numbers of tokens
  c.max_len = 12;
  c.eval_size = 8;
  return c;
}

struct Gradients {
  std::vector<std::vector<float>> values;  // per parameter
  double loss = 0;
  int64_t tokens = 0;
};

// The gradient of the first batch of 24 examples, computed by rank `rank` of `size` on its
// slice and summed by GradientSync (size 1: the whole batch in one backward, no sync).
Gradients batch_gradient(const TrainConfig& cfg, Communicator& comm) {
  const TaskSetup setup = make_task_setup(cfg);
  Generator init(init_seed(cfg));
  auto model = make_task_model(cfg, *setup.train, {12, 12}, init);
  data::ExampleStream stream(setup.train, stream_seed(cfg));
  std::vector<data::Example> batch = stream.next(24);
  const Slice mine = rank_slice(24, comm.rank(), comm.size());
  batch = std::vector<data::Example>(batch.begin() + mine.begin, batch.begin() + mine.end);
  const std::vector<Var> params = model->module().parameters();
  const LossOut l = model->loss(batch);
  l.loss.backward();
  Gradients g{{}, l.loss.item(), l.tokens};
  if (comm.size() > 1) {
    GradientSync sync(comm, params);
    const GlobalLoss total = sync.sum(g.loss, g.tokens, "test");
    g.loss = total.loss;
    g.tokens = total.tokens;
  }
  for (const Var& p : params) g.values.emplace_back(p.grad().data(), p.grad().data() + p.numel());
  return g;
}

}  // namespace

TEST_SUITE("train") {
  TEST_CASE("rank_slice: contiguous slices in rank order covering the batch, sizes within one") {
    for (int64_t n : {1, 5, 8, 64, 250})
      for (int size : {1, 2, 3, 4, 7}) {
        if (n < size) continue;
        int64_t next = 0;
        for (int r = 0; r < size; ++r) {
          const Slice s = rank_slice(n, r, size);
          CHECK(s.begin == next);
          CHECK(s.end - s.begin >= n / size);
          CHECK(s.end - s.begin <= n / size + 1);
          next = s.end;
        }
        CHECK(next == n);
      }
  }

  TEST_CASE("GradientSync: N ranks' summed gradient is the whole batch's, the same on every rank") {
    set_num_threads(1);
    for (const std::string model : {"transformer", "lstm"}) {
      const TrainConfig cfg = tiny_reversal(model);
      ThreadGroup alone(1);
      Gradients whole;
      alone.run([&](Communicator& comm) { whole = batch_gradient(cfg, comm); });
      for (int size : {2, 3, 4}) {
        CAPTURE(model);
        CAPTURE(size);
        std::vector<Gradients> ranks(static_cast<size_t>(size));
        ThreadGroup group(size);
        group.run([&](Communicator& comm) {
          set_num_threads(1);
          ranks[static_cast<size_t>(comm.rank())] = batch_gradient(cfg, comm);
        });
        CHECK(ranks[0].tokens == whole.tokens);
        // The loss: a weighted sum of N float means against one mean over every token.
        CHECK(std::abs(ranks[0].loss - whole.loss) <= 1e-6 * std::abs(whole.loss));
        for (size_t p = 0; p < whole.values.size(); ++p) {
          // Bound: the split changes only the order in which each gradient element's terms
          // are added (and where the 1/T scale is applied). A float sum of K terms in any order
          // is within (K - 1) u sum|terms| of the exact sum (u = 2^-24), so two orders differ by
          // at most 2 K u sum|terms|, with K the batch's scored tokens. We bound sum|terms| by
          // 16 max|g| over the parameter tensor: the per-token terms of these gradients do not
          // cancel by more than that (measured worst: the difference is 0.72 K u max|g|, 44x
          // inside the bound). A wrong weighting errs by a whole slice's share (~|g| / N), far
          // outside it; the key-bias gradients (exactly 0 in exact arithmetic) stay inside it
          // because the bound scales with the tensor's largest element, not the element's own.
          float max_g = 0;
          for (float v : whole.values[p]) max_g = std::max(max_g, std::abs(v));
          const double u = std::ldexp(1.0, -24);
          const double bound = 2 * static_cast<double>(whole.tokens) * u * max_g * 16;
          for (size_t i = 0; i < whole.values[p].size(); ++i) {
            const double diff = std::abs(ranks[0].values[p][i] - whole.values[p][i]);
            if (diff > bound) {
              FAIL_CHECK("parameter " << p << " element " << i << ": " << ranks[0].values[p][i]
                                      << " vs " << whole.values[p][i] << " (bound " << bound
                                      << ")");
              break;
            }
          }
          for (int r = 1; r < size; ++r)  // every rank holds the same bits
            CHECK(std::memcmp(ranks[static_cast<size_t>(r)].values[p].data(),
                              ranks[0].values[p].data(),
                              ranks[0].values[p].size() * sizeof(float)) == 0);
        }
      }
    }
    set_num_threads(0);
  }

  TEST_CASE("all_or_none: an error on one rank is raised on every rank, naming it") {
    ThreadGroup group(3);
    std::vector<std::string> messages(3);
    std::vector<bool> usage(3);
    group.run([&](Communicator& comm) {
      try {
        all_or_none(comm, "the test", [&] {
          if (comm.rank() == 1) throw UsageError("--steps: bad on this rank");
        });
      } catch (const UsageError& e) {
        messages[static_cast<size_t>(comm.rank())] = e.what();
        usage[static_cast<size_t>(comm.rank())] = true;
      }
    });
    for (int r = 0; r < 3; ++r) {
      CHECK(usage[static_cast<size_t>(r)]);
      CHECK(messages[static_cast<size_t>(r)].find("rank 1: --steps: bad on this rank") !=
            std::string::npos);
    }
    // No error anywhere: nothing thrown.
    group.run([&](Communicator& comm) { all_or_none(comm, "the test", [] {}); });
  }

  TEST_CASE("require_same_options: ranks started differently are refused on every rank") {
    ThreadGroup group(2);
    std::vector<std::string> messages(2);
    group.run([&](Communicator& comm) {
      try {
        require_same_options(comm, {{"--steps", comm.rank() == 0 ? "100" : "50"}, {"--seed", "1"}});
      } catch (const UsageError& e) {
        messages[static_cast<size_t>(comm.rank())] = e.what();
      }
    });
    for (const auto& m : messages)
      CHECK(m.find("rank 1: --steps is 50 but 100 on rank 0") != std::string::npos);
    group.run([&](Communicator& comm) { require_same_options(comm, {{"--steps", "100"}}); });
  }
}

}  // namespace attn::train::distributed
