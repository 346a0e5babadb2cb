// Registry rows for reductions (sum, mean, max), over all elements and over one axis.
//
// max gets inputs with no near-ties: its gradient jumps where two elements swap places, so
// every slice holds distinct values at least 0.15 apart (far beyond the gradcheck's eps).
#include <fmt/format.h>

#include <utility>

#include "autograd/registry/registry.h"

namespace attn {

namespace {

// The values 0.25 k (k = 0..n-1) in a seeded random order, each moved by at most 0.05.
Tensor distinct_values(const Shape& shape, Generator& g) {
  Tensor t = Tensor::empty(shape);
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) t[i] = real(0.25 * double(i - n / 2));
  for (int64_t i = n - 1; i > 0; --i) std::swap(t[i], t[g.randint(i + 1)]);  // Fisher-Yates
  for (int64_t i = 0; i < n; ++i) t[i] += real(0.1 * g.uniform() - 0.05);
  return t;
}

struct Reduction {
  const char* name;
  Var (*all)(const Var&);
  Var (*axis)(const Var&, int, bool);
  std::string torch_all;     // the expression over every element
  std::string torch_format;  // over an axis: {0} = dim, {1} = keepdim
  bool distinct;             // needs tie-free inputs
};

}  // namespace

std::vector<OpCase> reduction_cases() {
  const std::vector<Reduction> reductions = {
      {"sum", sum, sum, "torch.sum(x)", "torch.sum(x, dim={}, keepdim={})", false},
      {"mean", mean, mean, "torch.mean(x)", "torch.mean(x, dim={}, keepdim={})", false},
      {"max", max, max, "x.max()", "x.max(dim={}, keepdim={}).values", true},
  };
  struct AxisCase {
    Shape shape;
    int axis;
    bool keepdim;
  };
  // Every axis position (first, middle, last), negative axes, keepdim both ways, ranks 0-4.
  const std::vector<AxisCase> axis_cases = {
      {{3, 4}, 0, false},       {{2, 3, 4}, 1, true}, {{2, 3, 4}, -1, false},
      {{2, 3, 4}, -3, true},    {{2, 3, 4}, 2, true}, {{2, 3, 2, 2}, 2, false},
      {{2, 3, 2, 2}, -4, true}, {{5}, 0, false},      {{}, 0, false},
      {{3, 19}, 1, false},  // a long last axis: the row kernel's 8-wide blocks and a remainder
  };
  std::vector<OpCase> rows;
  for (const Reduction& r : reductions) {
    auto make = [distinct = r.distinct](Shape shape) {
      return [distinct, shape](Generator& g) {
        return std::vector{
            float_input("x", distinct ? distinct_values(shape, g) : Tensor::randn(shape, g))};
      };
    };
    rows.push_back({fmt::format("{}_all_2x3x4", r.name), r.torch_all, make({2, 3, 4}),
                    [f = r.all](const std::vector<Var>& v) { return f(v[0]); }});
    for (const AxisCase& c : axis_cases)
      rows.push_back(
          {fmt::format("{}_dim{}{}_rank{}", r.name, c.axis, c.keepdim ? "_keep" : "",
                       c.shape.size()),
           fmt::format(fmt::runtime(r.torch_format), c.axis, c.keepdim ? "True" : "False"),
           make(c.shape),
           [f = r.axis, c](const std::vector<Var>& v) { return f(v[0], c.axis, c.keepdim); }});
  }
  return rows;
}

}  // namespace attn
