// Peak memory of one attention forward + backward, blockwise kernel vs materialised scores.
//
//   attn_attention_memory blockwise 4096        # one measurement per process (peak RSS)
//   for m in blockwise naive sdpa; do for t in 1024 2048 4096 8192; do
//     ATTN_THREADS=1 attn_attention_memory $m $t; done; done
//
// q, k, v are (1,1,T,d) parameters (d = 64 unless given). Methods:
//   blockwise  attn::blockwise_attention (online softmax; nothing T x T, forward or backward)
//   naive      matmul -> mul_scalar -> softmax -> matmul on the tape (each keeps a T x T tensor)
//   sdpa       nn::scaled_dot_product_attention (the library's reference attention)
// Prints "method T peak_MiB baseline_MiB delta_MiB seconds", where baseline is the peak resident
// size after the inputs and a buffer the size of q, k, v and dy together were allocated, so the
// delta is what the attention itself added. Blockwise's delta grows like T, the others' like T^2.
#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <string>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"
#include "nn/attention/sdpa.h"

namespace {
double peak_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // KiB on Linux
}
}  // namespace

int main(int argc, char** argv) {
  using namespace attn;
  if (argc < 3) {
    fmt::print(stderr, "usage: attn_attention_memory blockwise|naive|sdpa T [d=64]\n");
    return 2;
  }
  init_threads_from_env();
  const std::string method = argv[1];
  const int64_t t = std::stoll(argv[2]), d = argc > 3 ? std::stoll(argv[3]) : 64;
  if (method != "blockwise" && method != "naive" && method != "sdpa") {
    fmt::print(stderr, "attn_attention_memory: unknown method '{}'\n", method);
    return 2;
  }
  Generator gen(1);
  Var q = Var::parameter(Tensor::randn({1, 1, t, d}, gen));
  Var k = Var::parameter(Tensor::randn({1, 1, t, d}, gen));
  Var v = Var::parameter(Tensor::randn({1, 1, t, d}, gen));
  const Tensor dy = Tensor::randn({1, 1, t, d}, gen);
  { Tensor touch = Tensor::randn({4, 1, t, d}, gen); }  // room for the output and gradients
  const double base = peak_mib();
  const auto start = std::chrono::steady_clock::now();
  try {
    Var y;
    if (method == "blockwise") {
      y = blockwise_attention(q, k, v, /*causal=*/false, /*block_size=*/64);
    } else if (method == "naive") {
      const real scale = static_cast<real>(1.0 / std::sqrt(static_cast<double>(d)));
      y = matmul(softmax(mul_scalar(matmul(q, k, false, true), scale)), v);
    } else {
      y = nn::scaled_dot_product_attention(q, k, v).out;
    }
    y.backward(dy);
  } catch (const Error& e) {
    fmt::print(stderr, "attn_attention_memory: {}\n", e.what());
    return 1;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double peak = peak_mib();
  fmt::print("{} {} {:.1f} {:.1f} {:.1f} {:.3f}\n", method, t, peak, base, peak - base, secs);
  return 0;
}
