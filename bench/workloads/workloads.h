// The benchmark workloads of issue 7, each a list of cases for bench/harness.h.
//
//   for (const WorkloadInfo& w : workloads()) fmt::print("{} {}\n", w.id, w.summary);
//   std::vector<BenchCase> cases = workload_cases("W3");   // throws UsageError if unknown
//
// Every workload is built from seeded random data with the shapes (and optimizer) of the
// experiment it stands for; bench/torch_reference.py builds the same ones in PyTorch.
// FLOPs are counted GEMM FLOPs (2 m n k); a training step counts 3x its forward (the backward
// of a matmul is two matmuls of the same size). Tokens: predicted tokens per step for the
// training workloads, the sequence length T for W3 and W5, the tokens of all sequences for W6.
#pragma once

#include <string>
#include <vector>

#include "autograd/tensor.h"
#include "bench/harness.h"

namespace attn::bench {

struct WorkloadInfo {
  std::string id;       // "W3"
  std::string summary;  // one line
  bool available;       // false while the layers it needs are not in the tree yet
  std::vector<BenchCase> (*cases)();
  bool in_all = true;  // false: only when named (W7 is meant to be run under mpirun)
};

const std::vector<WorkloadInfo>& workloads();
std::vector<BenchCase> workload_cases(const std::string& id);

// Each workload's cases (bench/workloads/w*.cpp).
std::vector<BenchCase> w1_cases();
std::vector<BenchCase> w2_cases();
std::vector<BenchCase> w2r_cases();  // W2 at recurrent-baselines' sizes
std::vector<BenchCase> w3_cases();
std::vector<BenchCase> w4_cases();
std::vector<BenchCase> w4d_cases();  // W4 with dropout 0.1
std::vector<BenchCase> w5_cases();
std::vector<BenchCase> w6_cases();
std::vector<BenchCase> w7_cases();
std::vector<BenchCase> w9_cases();
std::vector<BenchCase> w10_cases();
std::vector<BenchCase> w11_cases();  // attention-zoo's titans-mac model
bool w1_w4_available();

// Random token ids in [lo, hi) as a (rows, cols) tensor, seeded.
Tensor random_ids(int64_t rows, int64_t cols, int64_t lo, int64_t hi, uint64_t seed);

}  // namespace attn::bench
