// W7: data-parallel training (train/distributed/). The step of `attnlab train reversal` with
// its default transformer (d 64, 4 heads, 2+2 layers, ff 256, global batch 64, lengths 1..16):
// every rank draws the whole global batch, computes its slice, the gradients are summed in rank
// order, and every rank clips and steps AdamW. Run it as one process or as ranks:
//   attnlab bench -w W7 --threads 2                                # 1 rank x 2 threads
//   mpirun -np 2 attnlab bench -w W7 --threads 1                   # 2 ranks x 1 thread
// Two cases: the whole step, and the gradient sum alone (the all-reduce cost inside the step;
// zero for one rank). Rank 0 prints. docs/distributed.md has the numbers of this machine.
#include <fmt/format.h>

#include <memory>

#include "autograd/kernels/parallel.h"
#include "bench/workloads/workloads.h"
#include "data/stream.h"
#include "train/distributed/data_parallel.h"
#include "train/optim/adam.h"
#include "train/optim/clip.h"
#include "train/run/task_model.h"
#include "train/run/task_setup.h"

namespace attn::bench {

namespace {

namespace dist = train::distributed;

struct W7State {
  train::TrainConfig cfg;  // the train command's defaults
  train::TaskSetup setup = train::make_task_setup(cfg);
  Generator init{train::init_seed(cfg)};
  std::unique_ptr<train::TaskModel> model =
      train::make_task_model(cfg, *setup.train, {cfg.max_len, cfg.max_len}, init);
  data::ExampleStream stream{setup.train, train::stream_seed(cfg)};
  std::vector<Var> params = model->module().parameters();
  train::AdamW opt{params, {.lr = cfg.lr, .weight_decay = cfg.weight_decay}};
  dist::GradientSync sync{dist::world(), params};

  void step() {
    dist::Communicator& comm = dist::world();
    std::vector<data::Example> batch = stream.next(cfg.batch_size);
    const dist::Slice mine = dist::rank_slice(cfg.batch_size, comm.rank(), comm.size());
    batch = std::vector<data::Example>(batch.begin() + mine.begin, batch.begin() + mine.end);
    opt.zero_grad();
    const train::LossOut l = model->loss(batch);
    l.loss.backward();
    if (comm.size() > 1) sync.sum(l.loss.item(), l.tokens, "the W7 step");
    train::clip_grad_norm(params, cfg.clip);
    opt.step();
  }
};

std::string layout() {
  const int ranks = dist::world().size();
  return fmt::format("{} rank{} x {} thread{}", ranks, ranks > 1 ? "s" : "", num_threads(),
                     num_threads() > 1 ? "s" : "");
}

}  // namespace

std::vector<BenchCase> w7_cases() {
  auto s = std::make_shared<std::unique_ptr<W7State>>();
  BenchCase step;
  step.workload = "W7";
  step.name = "train step, " + layout();
  step.setup = [s] { *s = std::make_unique<W7State>(); };
  step.step = [s] { (*s)->step(); };
  step.teardown = [s] { s->reset(); };

  // The sum alone, on the gradients one real step left: the same buffer size and pattern.
  BenchCase sum;
  sum.workload = "W7";
  sum.name = "gradient sum alone, " + layout();
  sum.setup = [s] {
    *s = std::make_unique<W7State>();
    (*s)->step();
  };
  sum.step = [s] {
    W7State& st = **s;
    if (dist::world().size() > 1) st.sync.sum(1.0, 1, "the W7 gradient sum");
  };
  sum.teardown = [s] { s->reset(); };
  return {step, sum};
}

}  // namespace attn::bench
