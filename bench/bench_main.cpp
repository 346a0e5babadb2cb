#include "bench/bench_main.h"

#include <fmt/format.h>
#include <sys/utsname.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "autograd/error.h"
#include "autograd/kernels/parallel.h"
#include "bench/workloads/workloads.h"
#include "train/distributed/communicator.h"

namespace attn::bench {

namespace {

// "AMD EPYC" from /proc/cpuinfo's first model name (empty when unreadable).
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

double mib(int64_t bytes) {
  return static_cast<double>(bytes) / (1 << 20);
}

nlohmann::json to_json(const CaseResult& r) {
  return {{"workload", r.workload},
          {"name", r.name},
          {"steps", r.steps},
          {"median_ms", r.median_ms},
          {"min_ms", r.min_ms},
          {"max_ms", r.max_ms},
          {"gflops", r.gflops},
          {"cpu_ms", r.cpu_ms},
          {"gflops_per_cpu_s", r.gflops_per_cpu_s},
          {"tokens_per_s", r.tokens_per_s},
          {"peak_tensor_mib", mib(r.peak_tensor_bytes)},
          {"peak_rss_mib", mib(r.peak_rss_bytes)}};
}

void print_header() {
  fmt::print("{:<4} {:<36} {:>5} {:>10} {:>10} {:>10} {:>8} {:>11} {:>9} {:>9}\n", "id", "case",
             "steps", "median ms", "min ms", "max ms", "GFLOP/s", "tokens/s", "tens MiB",
             "RSS MiB");
}

void print_row(const CaseResult& r) {
  fmt::print(
      "{:<4} {:<36} {:>5} {:>10.3f} {:>10.3f} {:>10.3f} {:>8.1f} {:>11.0f} {:>9.1f} {:>9.1f}\n",
      r.workload, r.name, r.steps, r.median_ms, r.min_ms, r.max_ms, r.gflops, r.tokens_per_s,
      mib(r.peak_tensor_bytes), mib(r.peak_rss_bytes));
  std::fflush(stdout);
}

}  // namespace

int run_bench_command(const BenchOptions& options) {
  if (options.steps < 1 || options.warmup < 0)
    throw UsageError(fmt::format("bench: --steps must be >= 1 and --warmup >= 0 (got {} and {})",
                                 options.steps, options.warmup));
  if (options.threads < 0)
    throw UsageError(
        fmt::format("bench: --threads must be >= 0 (0 = all cores), got {}", options.threads));
  if (options.threads > 0)
    set_num_threads(options.threads);
  else
    init_threads_from_env();

  std::vector<std::string> ids;
  if (options.workload == "all" || options.workload == "ALL") {
    for (const WorkloadInfo& w : workloads())
      if (w.available && w.in_all) ids.push_back(w.id);
  } else {
    ids.push_back(options.workload);
  }
  std::vector<BenchCase> cases;
  for (const std::string& id : ids)
    for (BenchCase& c : workload_cases(id))
      if (options.filter.empty() || c.name.find(options.filter) != std::string::npos)
        cases.push_back(std::move(c));
  if (cases.empty())
    throw UsageError(fmt::format("bench: --filter '{}' matches no case of --workload {}",
                                 options.filter, options.workload));

  // Under mpirun every rank measures (W7's ranks work together); rank 0 prints.
  const bool lead = train::distributed::world().rank() == 0;
  if (!options.json && lead) {
    fmt::print("attnlab bench: {} threads, {} warm-up + {} timed steps per case\n", num_threads(),
               options.warmup, options.steps);
    print_header();
  }
  nlohmann::json results = nlohmann::json::array();
  for (const BenchCase& c : cases) {
    const CaseResult r = measure(c, options.warmup, options.steps);
    if (!lead) continue;
    if (options.json)
      results.push_back(to_json(r));
    else
      print_row(r);
  }
  if (options.json && lead) {
    utsname un{};
    uname(&un);
    const nlohmann::json doc = {{"tool", "attnlab"},        {"date", utc_now()},
                                {"threads", num_threads()}, {"cpu", cpu_model()},
                                {"kernel", un.release},     {"warmup", options.warmup},
                                {"steps", options.steps},   {"results", results}};
    fmt::print("{}\n", doc.dump(2));
  }
  return 0;
}

}  // namespace attn::bench
