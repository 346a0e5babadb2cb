// attn_bench_cli: `attnlab bench` as a standalone program, for scripts/bench and for machines
// where the attnlab executable is not built. Same flags as `attnlab bench`.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "autograd/error.h"
#include "bench/bench_main.h"

int main(int argc, char** argv) {
  attn::bench::BenchOptions o;
  CLI::App app{"attnlab bench: time the performance workloads (W1..W7, W2r, W4d, W9..W11)"};
  app.add_option(
      "--workload,-w", o.workload,
      "W1..W7, W2r, W4d, W9..W11 or all (all = every one but W7, which is data-parallel)");
  app.add_option("--filter", o.filter, "only cases whose name contains this text");
  app.add_option("--threads", o.threads, "threads (0 = all cores, or ATTN_THREADS)");
  app.add_option("--steps", o.steps, "timed steps per case");
  app.add_option("--warmup", o.warmup, "untimed steps before timing");
  app.add_flag("--json", o.json, "print JSON instead of a table");
  CLI11_PARSE(app, argc, argv);
  try {
    return attn::bench::run_bench_command(o);
  } catch (const attn::UsageError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
