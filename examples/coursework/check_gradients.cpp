// Gradient check of soft_cap, alone and inside a small network, in double precision: built
// against attnlab::attnlab_f64 (attn::real is double there). Exit code 1 when any Jacobian entry
// disagrees with central differences by more than 1e-6.
//
//   ./check_gradients
//   soft_cap(x, cap)                 entries=48   max_error=3.1e-11
//   ...
//   GatedAttention (causal, 2 heads) entries=...  max_error=...
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <attnlab/autograd/functional.h>
#include <attnlab/autograd/gradcheck.h>
#include <attnlab/nn/linear.h>

#include "gated_attention.h"
#include "soft_cap.h"

namespace {

bool report(const std::string& what, const attn::GradcheckResult& r) {
  const bool ok = r.max_error <= 1e-6;
  std::printf("%-32s entries=%-5lld max_error=%.1e %s\n", what.c_str(),
              static_cast<long long>(r.entries), r.max_error, ok ? "ok" : "FAILED");
  if (!ok) std::printf("  worst: %s\n", r.worst.c_str());
  return ok;
}

}  // namespace

int main() {
  static_assert(sizeof(attn::real) == sizeof(double), "link this program with attnlab_f64");
  attn::Generator gen(7);
  bool ok = true;

  // The op alone: x (3,4) spread over the whole tanh, caps away from 0.
  attn::Var x = attn::Var::parameter(attn::Tensor::randn({3, 4}, gen, 2.0));
  attn::Var cap = attn::Var::parameter(attn::Tensor::rand({4}, gen, 0.5, 2.0));
  ok &= report("soft_cap(x, cap)",
               attn::gradcheck({x, cap}, [&] { return coursework::soft_cap(x, cap); }));

  // The layer inside a network: every parameter and the input.
  attn::nn::Linear in(3, 5, true, gen), out(5, 2, true, gen);
  coursework::SoftCap capped(5, 0.8);
  attn::Var z = attn::Var::parameter(attn::Tensor::randn({4, 3}, gen));
  std::vector<attn::Var> leaves{z};
  for (const auto* m : std::vector<const attn::nn::Module*>{&in, &capped, &out})
    for (const attn::Var& p : m->parameters()) leaves.push_back(p);
  ok &= report("linear -> SoftCap -> linear",
               attn::gradcheck(leaves, [&] { return out.forward(capped.forward(in.forward(z))); }));

  // The plugin's mixer (gated_attention_plugin.cpp): x (1,4,4), 2 heads, every parameter.
  coursework::GatedAttention gated(4, 2, gen);
  attn::Var xs = attn::Var::parameter(attn::Tensor::randn({1, 4, 4}, gen));
  std::vector<attn::Var> gated_leaves{xs};
  for (const attn::Var& p : gated.parameters()) gated_leaves.push_back(p);
  ok &= report("GatedAttention (causal, 2 heads)",
               attn::gradcheck(gated_leaves, [&] { return gated.forward(xs); }));
  return ok ? 0 : 1;
}
