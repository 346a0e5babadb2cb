// W10: the S6 selective scan two ways, forward+backward, B 4, E 64 channels, N 16 states,
// T = 64 .. 1024 (the selective-ssm experiment's layer at d_model 32, expand 2):
//   sequential - nn::selective_scan_sequential, the reference path: elementary ops per time step
//                (slice, reshape, mul, exp, add, matmul ...), 15 tape records and their
//                (B,E,N) or smaller temporaries per step;
//   chunked    - the fused op attn::selective_scan with chunks of 64 steps: one record, the
//                states recomputed chunk by chunk in the backward;
//   one chunk  - the fused op with chunk = T, the plain scan without the chunk passes (what the
//                layer's default chunk of 256 runs up to T = 256), to show what chunking costs.
// The step time is the measure; peak_tensor_bytes shows the sequential path's stored states.
// Two more cases time the whole nn::SelectiveSSM layer (d_model 32, so E 64, N 16) at T = 256
// with each scan forced: how much of a layer's step the scan is.
#include <memory>

#include "autograd/functional.h"
#include "bench/workloads/workloads.h"
#include "nn/ssm/selective_scan_reference.h"
#include "nn/ssm/selective_ssm.h"

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

struct LayerState {
  std::shared_ptr<nn::SelectiveSSM> layer;
  Var x;
  Tensor dy;
};

BenchCase layer_case(int64_t t, nn::SsmScan scan) {
  auto s = std::make_shared<LayerState>();
  BenchCase c;
  c.workload = "W10";
  c.name = std::string("S6 layer, ") + nn::ssm_scan_name(scan) + " fwd+bwd T=" + std::to_string(t);
  c.tokens = static_cast<double>(kBatch * t);
  c.setup = [s, t, scan] {
    Generator gen(11);
    nn::SelectiveSsmOptions o;
    o.d_state = kStates;
    o.scan = scan;
    s->layer = std::make_shared<nn::SelectiveSSM>(kChannels / 2, gen, o);
    s->x = Var::parameter(Tensor::randn({kBatch, t, kChannels / 2}, gen));
    s->dy = Tensor::randn({kBatch, t, kChannels / 2}, gen);
  };
  c.step = [s] {
    s->layer->zero_grad();
    s->x.zero_grad();
    s->layer->forward(s->x).backward(s->dy);
  };
  c.teardown = [s] { *s = LayerState{}; };
  return c;
}

}  // namespace

std::vector<BenchCase> w10_cases() {
  std::vector<BenchCase> cases;
  for (int64_t t : {64, 256, 1024})
    for (ScanWay way : {ScanWay::kSequential, ScanWay::kChunked, ScanWay::kOneChunk})
      cases.push_back(scan_case(t, way));
  for (nn::SsmScan scan : {nn::SsmScan::kSequential, nn::SsmScan::kChunked})
    cases.push_back(layer_case(256, scan));
  return cases;
}

}  // namespace attn::bench
