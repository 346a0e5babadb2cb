// ring-attention [001, ring attention over several devices]: exact
// attention over a sequence split across MPI ranks, each rank's key/value block passed round
// the ring (ring_attention_op.h), against the same attention in one process.
//
//   mpirun -np 2 attnlab run ring-attention --threads 1      # two ranks, 20-70 s
//   mpirun -np 4 --oversubscribe attnlab run ring-attention --threads 1
//   attnlab run ring-attention                               # alone: a ring of one rank
//
// Part 1 (exactness): at --check_length, the ring's output and its gradients dQ, dK, dV
// (gathered from every rank) against one-process float32 attention, with the tolerance set by
// float32 rounding itself: 4 x the one-process float32 result's distance from float64.
// Part 2 (cost): at each of --lengths, the bytes each rank sends (counted by the communicator)
// against the formula, and the step time (forward + backward) against one process.
// Started without mpirun there is one rank: the ring has nobody to pass blocks to, and the rows
// that need two or more ranks say `not judged`.
#include <thread>

#include "experiments/efficient/ring_attention_op.h"
#include "experiments/efficient/ring_attention_reference.h"
#include "experiments/kit/kit.h"
#include "train/distributed/data_parallel.h"

namespace attn::experiments {

namespace {

using train::distributed::Communicator;

struct Shapes {
  int64_t heads, d;
};
Shapes read_shapes(const Config& cfg) {
  const train::options::ModelSettings m = read_model(cfg);
  return {m.nhead, m.d_model / m.nhead};
}

// Part 1: the ring against one process, outputs and gradients, at T = check_length.
void exactness_part(const Config& cfg,
                    RunContext& ctx,
                    Communicator& comm,
                    DocumentComparison& cmp) {
  const Shapes s = read_shapes(cfg);
  const int64_t t = cfg.get_int("check_length");
  const int n = comm.size();
  Generator gen(ctx.seed());  // the same full inputs on every rank; each keeps its block
  const Tensor q = Tensor::randn({s.heads, t, s.d}, gen), k = Tensor::randn({s.heads, t, s.d}, gen),
               v = Tensor::randn({s.heads, t, s.d}, gen),
               d_out = Tensor::randn({s.heads, t, s.d}, gen);
  const Var qb = Var::parameter(block_of_rank(q, comm.rank(), n)),
            kb = Var::parameter(block_of_rank(k, comm.rank(), n)),
            vb = Var::parameter(block_of_rank(v, comm.rank(), n));
  const Var ob = ring_attention(qb, kb, vb, comm, cfg.get_int("query_rows"));
  const Tensor o_block = ob.value().clone();
  sum(mul(ob, Var::constant(block_of_rank(d_out, comm.rank(), n)))).backward();
  auto whole = [&](const Tensor& block, const char* what) {
    const Tensor w = gather_blocks(comm, block, what);
    return std::vector<double>(w.data(), w.data() + w.numel());
  };
  const AttentionValues ring{whole(o_block, "outputs"), whole(qb.grad(), "dQ"),
                             whole(kb.grad(), "dK"), whole(vb.grad(), "dV")};
  const AttentionValues one = attention_in_float(q, k, v, d_out);
  const AttentionValues exact = attention_in_double(q, k, v, d_out);

  Table tab(fmt::format("Ring of {} rank{} vs one process, T = {}, {} heads of d = {}", n,
                        n == 1 ? "" : "s", t, s.heads, s.d),
            {"quantity", "max |ring - one process|", "max |one process - float64|",
             "max |ring - float64|", "tolerance (4 x float32 rounding)"});
  const char* names[] = {"outputs O", "dQ", "dK", "dV"};
  const std::vector<double>* ring_v[] = {&ring.o, &ring.dq, &ring.dk, &ring.dv};
  const std::vector<double>* one_v[] = {&one.o, &one.dq, &one.dk, &one.dv};
  const std::vector<double>* exact_v[] = {&exact.o, &exact.dq, &exact.dk, &exact.dv};
  const char* keys[] = {"output", "dq", "dk", "dv"};
  for (int i = 0; i < 4; ++i) {
    const double gap = kit::max_abs_diff(*ring_v[i], *one_v[i]),
                 rounding = kit::max_abs_diff(*one_v[i], *exact_v[i]);
    const double ring_error = kit::max_abs_diff(*ring_v[i], *exact_v[i]), tolerance = 4 * rounding;
    tab.add_row({names[i], sci(gap), sci(rounding), sci(ring_error), sci(tolerance)});
    ctx.result(fmt::format("{}_gap", keys[i]), gap);
    ctx.result(fmt::format("{}_float32_rounding", keys[i]), rounding);
    ctx.result(fmt::format("{}_ring_error", keys[i]), ring_error);
    cmp.add(fmt::format("{}: max |ring - one process| (exact attention: 0 up to rounding)",
                        names[i]),
            0, gap, tolerance, "", 8)
        .not_judged_if(n == 1, "one rank: no block went round a ring (run under mpirun -np 2+)");
  }
  ctx.table(tab);
}

struct CostCurve {
  std::vector<double> lengths, sent_bytes, formula_bytes, ring_ms, one_ms;
  double last_spread = 1;  // at the longest T: the larger max / min of the two timings' repeats
};

// One step (forward and backward) of ring attention over the ranks of comm, on this rank's
// random (H,Tb,D) blocks; returns its timing, and the bytes the last step sent in counters.
Timing time_ring(const Shapes& s,
                 int64_t block_len,
                 Communicator& comm,
                 const Config& cfg,
                 Generator& gen,
                 RingCounters& counters) {
  const Tensor q = Tensor::randn({s.heads, block_len, s.d}, gen),
               k = Tensor::randn({s.heads, block_len, s.d}, gen),
               v = Tensor::randn({s.heads, block_len, s.d}, gen),
               d_out = Tensor::randn({s.heads, block_len, s.d}, gen);
  return time_median(
      [&] {
        const Var qv = Var::parameter(q), kv = Var::parameter(k), vv = Var::parameter(v);
        const Var o = ring_attention(qv, kv, vv, comm, cfg.get_int("query_rows"), &counters);
        sum(mul(o, Var::constant(d_out))).backward();
      },
      static_cast<int>(cfg.get_int("reps")), 1);
}

// Part 2: bytes per rank and step time against T, beside one process running the same kernels
// on the whole sequence (rank 0 alone, while the other ranks wait).
CostCurve cost_part(const Config& cfg, Communicator& comm) {
  const Shapes s = read_shapes(cfg);
  const int n = comm.size();
  Generator gen(cfg.get_int("seed") * 7919 + comm.rank());
  const auto alone = train::distributed::make_single_process();
  CostCurve c;
  for (const int64_t t : cfg.get_ints("lengths")) {
    RingCounters counters, unused;
    const Timing ring = time_ring(s, t / n, comm, cfg, gen, counters);
    Timing one;
    if (comm.rank() == 0) one = time_ring(s, t, *alone, cfg, gen, unused);
    comm.all_gather("", fmt::format("waiting for rank 0's one-process timing at T = {}", t));
    const RingCounters formula = ring_bytes_formula(s.heads, t / n, s.d, s.d, n);
    c.lengths.push_back(static_cast<double>(t));
    c.sent_bytes.push_back(static_cast<double>(counters.forward_bytes + counters.backward_bytes));
    c.formula_bytes.push_back(static_cast<double>(formula.forward_bytes + formula.backward_bytes));
    c.ring_ms.push_back(1e3 * ring.median_s);
    c.one_ms.push_back(1e3 * one.median_s);
    c.last_spread = std::max(ring.max_s / ring.min_s, one.max_s / std::max(one.min_s, 1e-12));
  }
  return c;
}

void report_cost(const CostCurve& c, RunContext& ctx, int n, DocumentComparison& cmp) {
  Table tab(fmt::format("Per rank, one step (forward + backward), {} rank{}", n, n == 1 ? "" : "s"),
            {"T", "bytes sent (counted)", "formula (3N - 2) H (T/N) 2d 4", "ring step (ms)",
             "one process (ms)", "speed-up"});
  std::vector<double> speedup;
  for (size_t i = 0; i < c.lengths.size(); ++i) {
    speedup.push_back(c.one_ms[i] / c.ring_ms[i]);
    tab.add_row({fixed(c.lengths[i], 0), fixed(c.sent_bytes[i], 0), fixed(c.formula_bytes[i], 0),
                 fixed(c.ring_ms[i], 1), fixed(c.one_ms[i], 1), fixed(speedup.back(), 2)});
  }
  ctx.table(tab);
  ctx.result("lengths", c.lengths);
  ctx.result("sent_bytes_per_rank", c.sent_bytes);
  ctx.result("formula_bytes_per_rank", c.formula_bytes);
  ctx.result("ring_step_ms", c.ring_ms);
  ctx.result("one_process_step_ms", c.one_ms);
  ctx.result("speedup", speedup);
  ctx.result("load_average", load_average());
  const std::string alone = "one rank: nothing crosses to another rank (run under mpirun -np 2+)";
  cmp.add("bytes sent per rank at each T = the formula (3N - 2) H (T/N)(2d) 4", c.formula_bytes,
          c.sent_bytes, 0, "", 0)
      .exact_quantity()
      .not_judged_if(n == 1, alone);
  // A speed-up inside the repeats' own spread (max / min) says nothing either way.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const double noise = std::max(c.last_spread, 1.0), s_last = speedup.back();
  ctx.result("time_spread", c.last_spread);
  cmp.add_exact(fmt::format("the ranks share the work: ring faster than one process at T = {:.0f}",
                            c.lengths.back()),
                "yes", speedup.back() > 1 ? "yes" : "no",
                speedup.back() > 1 ? "" : "the moves of the blocks cost more than the work saved")
      .not_judged_if(n == 1, alone)
      .not_judged_if(static_cast<unsigned>(n) > cores,
                     fmt::format("oversubscribed: {} ranks on {} cores", n, cores))
      .not_judged_if(s_last < noise && s_last > 1 / noise,
                     fmt::format("speed-up {:.2f} within the timings' spread (repeats differ up "
                                 "to x{:.2f}; load average {:.1f})",
                                 s_last, noise, load_average()));

  LinePlot bytes = kit::line_plot("Bytes each rank sends per step", "T (tokens)", "bytes per rank",
                                  kit::Axes::kLogLog);
  bytes.series = {{"counted by the communicator", c.lengths, c.sent_bytes},
                  {"formula (3N - 2) H (T/N) 2d 4", c.lengths, c.formula_bytes}};
  ctx.figure("bytes", line_plot_svg(bytes),
             fmt::format("Bytes sent per rank in one forward + backward, {} ranks", n));
  LinePlot time = kit::line_plot("Step time", "T (tokens)", "ms (median)", kit::Axes::kLogLog);
  time.series = {{fmt::format("ring, {} ranks", n), c.lengths, c.ring_ms},
                 {"one process", c.lengths, c.one_ms}};
  ctx.figure("time", line_plot_svg(time),
             "Forward + backward: the ring's step on each rank against one process");
}

void run(const Config& cfg, RunContext& ctx) {
  Communicator& comm = train::distributed::world();
  const int n = comm.size();
  ctx.result("ranks", n);
  ctx.note(n == 1
               ? "One rank (started without mpirun, or with -np 1): the ring is a ring of one, "
                 "so every block stays here and no byte is sent. The rows that need two or more "
                 "ranks say `not judged`. Run `mpirun -np 2 attnlab run ring-attention --threads "
                 "1` (or -np 4 --oversubscribe) to pass the blocks between processes."
               : fmt::format("{} ranks ({}): each holds T/{} positions of the queries, keys and "
                             "values; key/value blocks travel to rank + 1.",
                             n, comm.describe(), n));
  DocumentComparison cmp("001 ring attention vs ours");
  ctx.section("Part 1: the ring equals one process");
  exactness_part(cfg, ctx, comm, cmp);
  ctx.section("Part 2: bytes and time against T");
  report_cost(cost_part(cfg, comm), ctx, n, cmp);
  ctx.compare(cmp);
}

// Every length must split evenly over the ranks (the same on every rank: agreed by all_or_none).
void check(const Config& cfg) {
  check_model(cfg);
  Communicator& comm = train::distributed::world();
  train::distributed::all_or_none(comm, "checking the lengths", [&] {
    std::vector<int64_t> lengths = cfg.get_ints("lengths");
    lengths.push_back(cfg.get_int("check_length"));
    for (const int64_t t : lengths)
      if (t % comm.size() != 0)
        throw UsageError(
            fmt::format("ring-attention: T = {} does not split over {} ranks (each "
                        "rank holds T/N positions)",
                        t, comm.size()));
  });
}

}  // namespace

Experiment ring_attention() {
  Experiment e;
  e.name = "ring-attention";
  e.source = "001 (ring attention)";
  e.purpose = "Exact attention with key/value blocks passed round a ring of MPI ranks";
  e.nondeterministic = {"compares measured step times", {"speedup", "faster"}};
  add_model_fields(e.config, {.d_model = 128, .nhead = 4});
  e.config.add_int("check_length", 512, "T of the exactness check (float64 reference)", {.min = 1})
      .add_ints("lengths", {512, 1024, 2048}, "T values of the bytes and time sweep", {.min = 1})
      .add_int("query_rows", 64, "query rows per score tile", {.min = 1})
      .add_int("reps", 3, "timed steps per T (median)", {.min = 1});
  e.quick = {{"check_length", "128"}, {"lengths", "128,256"}, {"reps", "1"}};
  e.check = check;
  e.run = run;
  return e;
}

}  // namespace attn::experiments
