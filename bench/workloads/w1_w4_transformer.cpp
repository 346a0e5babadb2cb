// W1 (reversal encoder-decoder) and W4 (decoder-only char LM): transformer training steps.
// They need nn/transformer, which is being written; until it lands these report "not built".
#include "bench/workloads/workloads.h"

namespace attn::bench {

bool w1_w4_available() {
  return false;
}

std::vector<BenchCase> w1_cases() {
  return {};
}

std::vector<BenchCase> w4_cases() {
  return {};
}

}  // namespace attn::bench
