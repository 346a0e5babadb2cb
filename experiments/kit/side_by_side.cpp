#include "experiments/kit/side_by_side.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include <omp.h>

#include "train/distributed/communicator.h"

namespace attn::experiments::kit {

namespace {
thread_local bool t_in_job = false;
}  // namespace

bool in_side_by_side_job() {
  return t_in_job;
}

size_t side_by_side_width(size_t jobs) {
  if (jobs < 2 || t_in_job || train::distributed::world().size() > 1) return 1;
  return std::min(jobs, static_cast<size_t>(std::max(1, omp_get_max_threads())));
}

void run_side_by_side(size_t jobs, const std::function<void(size_t)>& job) {
  const size_t width = side_by_side_width(jobs);
  if (width < 2) {
    for (size_t i = 0; i < jobs; ++i) job(i);
    return;
  }
  // Each worker takes the next job not yet taken, so a long job does not hold up the others'
  // queue. Which worker runs a job changes nothing it computes (the header's rules).
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errors(jobs);
  auto worker = [&] {
    t_in_job = true;
    // This thread's own OpenMP setting (an ICV per thread), which kernels::gemm also hands to
    // OpenBLAS for the calls it makes: every op of the job runs on this thread alone.
    omp_set_num_threads(1);
    for (size_t i = next++; i < jobs && !failed; i = next++) {
      try {
        job(i);
      } catch (...) {
        errors[i] = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> workers;
  for (size_t w = 1; w < width; ++w) workers.emplace_back(worker);
  // The calling thread is a worker too; its own thread count is put back afterwards.
  const int threads = omp_get_max_threads();
  worker();
  t_in_job = false;
  omp_set_num_threads(threads);
  for (std::thread& t : workers) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace attn::experiments::kit
