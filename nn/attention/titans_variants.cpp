#include "nn/attention/titans_variants.h"

#include <fmt/format.h>

#include "autograd/error.h"
#include "autograd/functional.h"

namespace attn::nn {

namespace {

MemoryOptions memory_of(const TitansHybridOptions& o) {
  return {.d_model = o.d_model, .depth = o.memory_depth, .hidden = o.memory_hidden};
}

void check_options(const char* layer, const TitansHybridOptions& o) {
  if (o.segment < 1 || o.window < 0)
    throw Error(fmt::format("{}: segment must be >= 1 and window >= 0, got {} and {}", layer,
                            o.segment, o.window));
}

void check_input(const char* layer, const Var& x, int64_t d_model) {
  if (x.rank() != 3 || x.size(2) != d_model)
    throw Error(
        fmt::format("{}: expected x (B,T,{}), got {}", layer, d_model, shape_str(x.shape())));
}

}  // namespace

TitansGateAttention::TitansGateAttention(const TitansHybridOptions& o, Generator& gen)
    : Module("TitansGateAttention"), LongTermMemory(*this, memory_of(o), gen), o_(o) {
  check_options("TitansGateAttention", o);
  swa = register_module("swa", std::make_shared<SlidingWindowAttention>(
                                   o.d_model, o.nhead, o.window, gen, /*causal=*/true,
                                   std::vector<int64_t>{}, o.bias));
  gate = register_module("gate", std::make_shared<Linear>(o.d_model, o.d_model, o.bias, gen));
}

Var TitansGateAttention::gate_values(const Var& x) const {
  return sigmoid(gate->forward(x));
}

Var TitansGateAttention::forward(const Var& x) const {
  check_input("TitansGateAttention", x, o_.d_model);
  const Var s = swa->forward(x).out, m = read_segments(x, o_.segment), g = gate_values(x);
  // g s + (1 - g) m = m + g (s - m)
  return add(m, mul(g, sub(s, m)));
}

TitansLayerAttention::TitansLayerAttention(const TitansHybridOptions& o, Generator& gen)
    : Module("TitansLayerAttention"), LongTermMemory(*this, memory_of(o), gen), o_(o) {
  check_options("TitansLayerAttention", o);
  swa = register_module("swa", std::make_shared<SlidingWindowAttention>(
                                   o.d_model, o.nhead, o.window, gen, /*causal=*/true,
                                   std::vector<int64_t>{}, o.bias));
}

Var TitansLayerAttention::forward(const Var& x) const {
  check_input("TitansLayerAttention", x, o_.d_model);
  return swa->forward(add(x, read_segments(x, o_.segment))).out;
}

}  // namespace attn::nn
