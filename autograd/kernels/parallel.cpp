#include "autograd/kernels/parallel.h"

#include <fmt/format.h>
#include <omp.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "autograd/error.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace attn {

namespace kernels {
namespace {
thread_local bool t_in_parallel_body = false;
}  // namespace

bool in_parallel_body() {
  return t_in_parallel_body;
}

bool exchange_in_parallel_body(bool inside) {
  const bool outer = t_in_parallel_body;
  t_in_parallel_body = inside;
  return outer;
}
}  // namespace kernels

void set_num_threads(int n) {
  if (n <= 0) n = omp_get_num_procs();
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int num_threads() {
  return omp_get_max_threads();
}

int parse_threads(const std::string& text, const std::string& source) {
  errno = 0;
  char* end = nullptr;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || n < 0)
    throw UsageError(fmt::format(
        "{}: expected a whole number of threads >= 0 (0 = all cores), got '{}'", source, text));
  if (n > kMaxThreads)
    throw UsageError(fmt::format(
        "{} {} is refused: at most {} threads (OpenBLAS runs at most {}, so more would make the "
        "recorded thread count wrong); this machine has {} cores, use 0 for all of them",
        source, text, kMaxThreads, kMaxThreads, omp_get_num_procs()));
  return static_cast<int>(n);
}

void init_threads_from_env() {
  const char* env = std::getenv("ATTN_THREADS");
  if (!env || !*env) return;
  set_num_threads(parse_threads(env, "ATTN_THREADS"));
}

}  // namespace attn
