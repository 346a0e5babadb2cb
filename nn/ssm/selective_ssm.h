// SelectiveSSM: the S6 layer of Mamba (Gu & Dao 2023), a selective state-space model whose step
// size Delta and projections B, C depend on the input, so it can choose per token what to keep.
//
//   attn::nn::SelectiveSSM ssm(/*d_model=*/32, gen, {.d_state = 16});
//   Var y = ssm.forward(x);                         // x (B,T,32) -> (B,T,32), causal
//   auto st = ssm.initial_state(/*batch=*/2);       // decoding with a fixed-size state:
//   Var y_t = ssm.step(x_t, st);                    // x_t (B,1,32) -> (B,1,32)
//
// With E = expand d_model channels, N = d_state and R = dt_rank:
//   [x ; z]   = in_proj(input)                       (B,T,2E), no bias
//   u         = SiLU(conv1d(x))                      causal depthwise conv, kernel d_conv
//   [dt; B; C] = x_proj(u)                           (B,T,R+2N), no bias: B_t, C_t depend on u_t
//   Delta     = softplus(dt_proj(dt))                (B,T,E), the per-channel step size > 0
//   A         = -exp(A_log)                          (E,N), negative: every mode decays
//   A_bar_t   = exp(Delta_t A),  B_bar_t = Delta_t B_t
//   h_t       = A_bar_t * h_{t-1} + B_bar_t u_t      h (E,N) per sequence, h_0 = 0
//   y_t       = C_t . h_t + D u_t
//   output    = out_proj(y * SiLU(z))                (B,T,d_model), no bias
//
// Discretisation. A continuous dh/dt = A h + B u held constant over a step Delta (zero-order
// hold) gives exactly A_bar = exp(Delta A) and, for diagonal A, B_bar = (exp(Delta A) - 1)/A B.
// We keep the exact A_bar but take Mamba's simplification B_bar = Delta B (its first-order
// term; the two differ by O((Delta A)^2) B): it is what Mamba's reference code and the document
// (section 9.3) write, it needs no division by A (no 0/0 as Delta A -> 0), and with it our
// outputs match a PyTorch transcription of Mamba's selective_scan_ref.
//
// Initialisation as Mamba's reference: S4D-real A_log[e,n] = log(n+1) (A_n = -(n+1));
// D = 1; dt_proj.weight U(-R^-1/2, R^-1/2) and dt_proj.bias = softplus^-1(dt) with dt
// log-uniform in [dt_min, dt_max] (floored at dt_init_floor), so Delta starts in that range;
// conv1d as nn.Conv1d; the other projections as nn.Linear.
//
// Two scans of one recurrence (autograd/mode.h's switch, or forced by options.scan):
//   sequential (reference): nn/ssm/selective_scan_reference.h, elementary ops per time step;
//   chunked (fast): the fused op attn::selective_scan (autograd/ops/fused/selective_scan.cpp).
// Everything around the scan is the same on both paths (Linear takes its own two paths).
// Parameter names (docs/checkpoint-format.md) follow mamba_simple.py: in_proj.weight,
// conv1d.weight, conv1d.bias, x_proj.weight, dt_proj.weight, dt_proj.bias, A_log, D,
// out_proj.weight.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "autograd/generator.h"
#include "autograd/var.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/ssm/causal_conv1d.h"

namespace attn::nn {

// Which scan SelectiveSSM runs: kAuto follows reference_mode() (sequential in reference mode,
// chunked on the fast path); the other two force one (to time them against each other).
enum class SsmScan { kAuto, kSequential, kChunked };
SsmScan ssm_scan_from_name(const std::string& name);  // "auto" | "sequential" | "chunked"
const char* ssm_scan_name(SsmScan scan);

struct SelectiveSsmOptions {
  int64_t d_state = 16;  // N, state entries per channel
  int64_t d_conv = 4;    // kernel of the causal depthwise convolution
  int64_t expand = 2;    // E = expand * d_model channels inside the layer
  int64_t dt_rank = 0;   // R; 0 means ceil(d_model / 16), Mamba's "auto"
  double dt_min = 1e-3, dt_max = 0.1, dt_init_floor = 1e-4;
  SsmScan scan = SsmScan::kAuto;
  int64_t chunk = 64;  // time steps per chunk of the chunked scan
};

// The recurrent state of one layer while decoding: what a step needs of the past.
struct SelectiveSsmState {
  Var conv;  // (B, d_conv-1, E): the convolution's last inputs
  Var h;     // (B, E, N): the SSM state
};

class SelectiveSSM : public Module {
 public:
  SelectiveSSM(int64_t d_model, Generator& gen, SelectiveSsmOptions options = {});

  Var forward(const Var& x) const;  // x (B,T,d_model) -> (B,T,d_model)

  SelectiveSsmState initial_state(int64_t batch) const;  // zeros
  // One position: x_t (B,1,d_model) -> (B,1,d_model), equal to forward's output at that
  // position given the same history. O(E N) per step, whatever the history's length.
  Var step(const Var& x_t, SelectiveSsmState& state) const;

  // Numbers held per sequence while decoding: (d_conv-1) E + E N, independent of T.
  int64_t state_numel_per_sequence() const;
  // True when forward runs the chunked fused scan (options.scan, else !reference_mode()).
  bool uses_chunked_scan() const;

  int64_t d_model() const { return d_model_; }
  int64_t d_inner() const { return d_inner_; }
  const SelectiveSsmOptions& options() const { return o_; }

  std::shared_ptr<Linear> in_proj;       // d_model -> 2E
  std::shared_ptr<CausalConv1d> conv1d;  // depthwise over E channels
  std::shared_ptr<Linear> x_proj;        // E -> R + 2N
  std::shared_ptr<Linear> dt_proj;       // R -> E, with bias
  Var A_log;                             // (E,N)
  Var D;                                 // (E)
  std::shared_ptr<Linear> out_proj;      // E -> d_model

 private:
  struct Projected {
    Var u, z, delta, b, c;  // u, z, delta (B,T,E); b, c (B,T,N)
  };
  // Everything before the scan except the convolution: x_c = conv output (B,T,E).
  Projected project(const Var& x_conv, const Var& z) const;
  Var a_matrix() const;  // -exp(A_log)

  int64_t d_model_, d_inner_, dt_rank_;
  SelectiveSsmOptions o_;
};

}  // namespace attn::nn
