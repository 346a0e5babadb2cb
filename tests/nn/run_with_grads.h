// A doctest helper for "two computations are one function" tests: run f on fresh leaves holding
// `inputs`, backpropagate gy, and keep the output and every input's gradient.
//
//   const Grads a = run_with_grads(in, gy, [](const std::vector<Var>& v) { return f(v[0]); });
//   CHECK(max_abs_diff(a.y, b.y) <= 1e-5);   // then each a.d[i] against b.d[i]
#pragma once

#include <functional>
#include <vector>

#include "autograd/tensor.h"
#include "autograd/var.h"

namespace attn::test {

struct Grads {
  Tensor y;
  std::vector<Tensor> d;  // d[i] = d(sum gy * y) / d inputs[i]
};

inline Grads run_with_grads(const std::vector<Tensor>& inputs,
                            const Tensor& gy,
                            const std::function<Var(const std::vector<Var>&)>& f) {
  std::vector<Var> leaves;
  for (const Tensor& t : inputs) leaves.push_back(Var::parameter(t.clone()));
  Var y = f(leaves);
  y.backward(gy);
  Grads g{y.value(), {}};
  for (const Var& l : leaves) g.d.push_back(l.grad());
  return g;
}

}  // namespace attn::test
