#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "autograd/error.h"
#include "bench/workloads/workloads.h"

namespace attn::bench {

Tensor random_ids(int64_t rows, int64_t cols, int64_t lo, int64_t hi, uint64_t seed) {
  Generator gen(seed);
  Tensor t = Tensor::empty({rows, cols});
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<real>(lo + gen.randint(hi - lo));
  return t;
}

const std::vector<WorkloadInfo>& workloads() {
  static const std::vector<WorkloadInfo> table = {
      {"W1", "reversal encoder-decoder transformer train step (post-norm, d 128, 8 heads, 2+2)",
       w1_w4_available(), w1_cases},
      {"W2", "LSTM seq2seq + Luong dot attention train step (emb/hidden 128, batch 64)", true,
       w2_cases},
      {"W2r",
       "LSTM seq2seq at recurrent-baselines' sizes: 2x128, batch 64, reversal 1..10, none / "
       "bahdanau / luong_general",
       true, w2r_cases},
      {"W3", "RNN (hidden 64) vs single-head attention (d 64), batch 1, T 16..1024", true,
       w3_cases},
      {"W4", "decoder-only char LM train step (pre-norm, 4 layers, d 128, ctx 128, AdamW)",
       w1_w4_available(), w4_cases},
      {"W4d", "W4 with dropout 0.1 (attention weights, after attention, in and after the FF)",
       w1_w4_available(), w4d_cases},
      {"W5", "attention memory: naive vs blockwise fwd+bwd, d 64, T 1024..16384", true, w5_cases},
      {"W6", "causal vs full attention fwd+bwd (4 heads, d 32), T 128..1024, 4096 tokens", true,
       w6_cases},
      {"W7", "data-parallel reversal train step (mpirun -np N): step and gradient-sum time", true,
       w7_cases, false},
      {"W9",
       "sliding-window attention fwd+bwd: dense masked vs banded (and + 8 random links), d 64, "
       "w 64, T 512..16384",
       true, w9_cases},
      {"W10", "S6 selective scan fwd+bwd: sequential tape vs chunked fused, E 64, N 16, T 64..1024",
       true, w10_cases},
      {"W11",
       "attention-zoo's titans-mac model train step (d 32, 2 layers, batch 32): recall T 14, "
       "majority T 64",
       true, w11_cases},
  };
  return table;
}

std::vector<BenchCase> workload_cases(const std::string& id) {
  auto upper = [](std::string s) {  // ids match in any case: w4d names W4d
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    return s;
  };
  for (const WorkloadInfo& w : workloads())
    if (upper(w.id) == upper(id)) {
      if (!w.available)
        throw Error(fmt::format("bench: workload {} needs layers that are not built yet", w.id));
      return w.cases();
    }
  std::string known;
  for (const WorkloadInfo& w : workloads()) known += " " + w.id;
  throw UsageError(fmt::format("bench: unknown workload '{}' (known:{} all)", id, known));
}

}  // namespace attn::bench
