// W10: the S6 selective scan two ways, forward+backward, B 4, E 64 channels, N 16 states,
// T = 64 .. 1024 (the selective-ssm experiment's layer at d_model 32, expand 2):
//   sequential - nn::selective_scan_sequential, the reference path: elementary ops per time step
//                (slice, reshape, mul, exp, add, matmul ...), about a dozen tape records and
//                (B,E,N) temporaries per step;
//   chunked    - the fused op attn::selective_scan (chunks of 64, the layer's default), one
//                record, states recomputed chunk by chunk in the backward;
//   one chunk  - the fused op with chunk = T: the plain scan without the chunk passes, to show
//                what chunking costs on top.
// The step time is the measure; peak_tensor_bytes shows the sequential path's stored states.
#include <memory>

#include "autograd/functional.h"
#include "bench/workloads/workloads.h"
#include "nn/ssm/selective_scan_reference.h"

namespace attn::bench {

namespace {

constexpr int64_t kBatch = 4, kChannels = 64, kStates = 16;

struct ScanState {
  std::vector<Var> in;  // u, delta, A, B, C, D
  Tensor dy;
};

enum class ScanWay { kSequential, kChunked, kOneChunk };

BenchCase scan_case(int64_t t, ScanWay way) {
  auto s = std::make_shared<ScanState>();
  BenchCase c;
  c.workload = "W10";
  const char* label = way == ScanWay::kSequential ? "sequential tape"
                      : way == ScanWay::kChunked  ? "chunked fused"
                                                  : "one-chunk fused";
  c.name = std::string(label) + " fwd+bwd T=" + std::to_string(t);
  c.tokens = static_cast<double>(kBatch * t);
  c.setup = [s, t] {
    Generator gen(10);
    Tensor a = Tensor::rand({kChannels, kStates}, gen, 0.5, 16.0);
    for (int64_t i = 0; i < a.numel(); ++i) a[i] = -a[i];
    s->in = {Var::parameter(Tensor::randn({kBatch, t, kChannels}, gen)),
             Var::parameter(Tensor::rand({kBatch, t, kChannels}, gen, 0.001, 0.2)),
             Var::parameter(a),
             Var::parameter(Tensor::randn({kBatch, t, kStates}, gen)),
             Var::parameter(Tensor::randn({kBatch, t, kStates}, gen)),
             Var::parameter(Tensor::randn({kChannels}, gen))};
    s->dy = Tensor::randn({kBatch, t, kChannels}, gen);
  };
  c.step = [s, t, way] {
    for (Var& p : s->in) p.zero_grad();
    const std::vector<Var>& v = s->in;
    Var y =
        way == ScanWay::kSequential
            ? nn::selective_scan_sequential(v[0], v[1], v[2], v[3], v[4], v[5])
            : selective_scan(v[0], v[1], v[2], v[3], v[4], v[5], way == ScanWay::kChunked ? 64 : t);
    y.backward(s->dy);
  };
  c.teardown = [s] { *s = ScanState{}; };
  return c;
}

}  // namespace

std::vector<BenchCase> w10_cases() {
  std::vector<BenchCase> cases;
  for (int64_t t : {64, 256, 1024})
    for (ScanWay way : {ScanWay::kSequential, ScanWay::kChunked, ScanWay::kOneChunk})
      cases.push_back(scan_case(t, way));
  return cases;
}

}  // namespace attn::bench
