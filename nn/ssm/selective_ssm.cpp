#include "nn/ssm/selective_ssm.h"

#include <fmt/format.h>

#include <cmath>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/mode.h"
#include "nn/init.h"
#include "nn/ssm/selective_scan_reference.h"

namespace attn::nn {

SsmScan ssm_scan_from_name(const std::string& name) {
  if (name == "auto") return SsmScan::kAuto;
  if (name == "sequential") return SsmScan::kSequential;
  if (name == "chunked") return SsmScan::kChunked;
  throw UsageError(fmt::format("unknown scan '{}' (expected auto, sequential or chunked)", name));
}

const char* ssm_scan_name(SsmScan scan) {
  switch (scan) {
    case SsmScan::kSequential:
      return "sequential";
    case SsmScan::kChunked:
      return "chunked";
    default:
      return "auto";
  }
}

namespace {

// Mamba's dt_proj bias: softplus^-1(dt) for dt log-uniform in [dt_min, dt_max], at least floor,
// so that softplus(dt_proj(.)) starts near dt. softplus^-1(y) = y + log(1 - e^-y).
Tensor dt_bias_init(int64_t channels, const SelectiveSsmOptions& o, Generator& gen) {
  Tensor bias = Tensor::empty({channels});
  const double lo = std::log(o.dt_min), hi = std::log(o.dt_max);
  for (int64_t e = 0; e < channels; ++e) {
    const double dt = std::max(std::exp(lo + gen.uniform() * (hi - lo)), o.dt_init_floor);
    bias[e] = static_cast<real>(dt + std::log(-std::expm1(-dt)));
  }
  return bias;
}

}  // namespace

SelectiveSSM::SelectiveSSM(int64_t d_model, Generator& gen, SelectiveSsmOptions options)
    : Module("SelectiveSSM"), d_model_(d_model), o_(options) {
  if (d_model < 1 || o_.d_state < 1 || o_.d_conv < 1 || o_.expand < 1 || o_.dt_rank < 0 ||
      o_.chunk < 1)
    throw Error(fmt::format(
        "SelectiveSSM: d_model, d_state, d_conv, expand and chunk must be >= 1 and dt_rank >= 0; "
        "got d_model={} d_state={} d_conv={} expand={} chunk={} dt_rank={}",
        d_model, o_.d_state, o_.d_conv, o_.expand, o_.chunk, o_.dt_rank));
  if (!(o_.dt_min > 0 && o_.dt_min <= o_.dt_max && o_.dt_init_floor > 0))
    throw Error(
        fmt::format("SelectiveSSM: need 0 < dt_min <= dt_max and dt_init_floor > 0; got "
                    "dt_min={} dt_max={} dt_init_floor={}",
                    o_.dt_min, o_.dt_max, o_.dt_init_floor));
  d_inner_ = o_.expand * d_model;
  dt_rank_ = o_.dt_rank > 0 ? o_.dt_rank : (d_model + 15) / 16;
  const int64_t e = d_inner_, n = o_.d_state;
  in_proj = register_module("in_proj", std::make_shared<Linear>(d_model, 2 * e, false, gen));
  conv1d = register_module("conv1d", std::make_shared<CausalConv1d>(e, o_.d_conv, gen));
  x_proj = register_module("x_proj", std::make_shared<Linear>(e, dt_rank_ + 2 * n, false, gen));
  dt_proj = register_module("dt_proj", std::make_shared<Linear>(dt_rank_, e, true, gen));
  const double std_dt = 1.0 / std::sqrt(static_cast<double>(dt_rank_));
  init::uniform_(dt_proj->weight.value(), gen, -std_dt, std_dt);
  dt_proj->bias.value() = dt_bias_init(e, o_, gen);
  Tensor a_log = Tensor::empty({e, n});  // S4D-real: A[e,n] = -(n+1)
  for (int64_t i = 0; i < e; ++i)
    for (int64_t j = 0; j < n; ++j) a_log[i * n + j] = static_cast<real>(std::log(j + 1.0));
  A_log = register_parameter("A_log", a_log);
  D = register_parameter("D", Tensor::ones({e}));
  out_proj = register_module("out_proj", std::make_shared<Linear>(e, d_model, false, gen));
}

bool SelectiveSSM::uses_chunked_scan() const {
  if (o_.scan == SsmScan::kAuto) return !reference_mode();
  return o_.scan == SsmScan::kChunked;
}

Var SelectiveSSM::a_matrix() const {
  return neg(exp(A_log));
}

SelectiveSSM::Projected SelectiveSSM::project(const Var& x_conv, const Var& z) const {
  const int64_t n = o_.d_state;
  Projected p;
  p.u = silu(x_conv);
  p.z = z;
  const Var dbc = x_proj->forward(p.u);  // (B,T,R+2N)
  p.delta = softplus(dt_proj->forward(slice(dbc, 2, 0, dt_rank_)));
  p.b = slice(dbc, 2, dt_rank_, dt_rank_ + n);
  p.c = slice(dbc, 2, dt_rank_ + n, dt_rank_ + 2 * n);
  return p;
}

Var SelectiveSSM::forward(const Var& x) const {
  if (x.rank() != 3 || x.size(2) != d_model_ || x.size(1) < 1)
    throw Error(fmt::format("SelectiveSSM: expected x (B,T,{}) with T >= 1, got {}", d_model_,
                            shape_str(x.shape())));
  const int64_t e = d_inner_;
  const Var xz = in_proj->forward(x);  // (B,T,2E)
  const Projected p = project(conv1d->forward(slice(xz, 2, 0, e)), slice(xz, 2, e, 2 * e));
  const Var a = a_matrix();
  const Var y = uses_chunked_scan() ? selective_scan(p.u, p.delta, a, p.b, p.c, D, o_.chunk)
                                    : selective_scan_sequential(p.u, p.delta, a, p.b, p.c, D);
  return out_proj->forward(mul(y, silu(p.z)));
}

SelectiveSsmState SelectiveSSM::initial_state(int64_t batch) const {
  return {conv1d->initial_buffer(batch),
          Var::constant(Tensor::zeros({batch, d_inner_, o_.d_state}))};
}

Var SelectiveSSM::step(const Var& x_t, SelectiveSsmState& state) const {
  if (x_t.rank() != 3 || x_t.size(1) != 1 || x_t.size(2) != d_model_)
    throw Error(fmt::format("SelectiveSSM::step: expected x_t (B,1,{}), got {}", d_model_,
                            shape_str(x_t.shape())));
  const int64_t e = d_inner_;
  const Var xz = in_proj->forward(x_t);  // (B,1,2E)
  const Projected p = project(conv1d->step(slice(xz, 2, 0, e), state.conv), slice(xz, 2, e, 2 * e));
  const Var y = add(selective_scan_step(p.u, p.delta, a_matrix(), p.b, p.c, state.h), mul(p.u, D));
  return out_proj->forward(mul(y, silu(p.z)));
}

int64_t SelectiveSSM::state_numel_per_sequence() const {
  return (o_.d_conv - 1) * d_inner_ + d_inner_ * o_.d_state;
}

}  // namespace attn::nn
