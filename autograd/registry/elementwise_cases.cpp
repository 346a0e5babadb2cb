// Registry rows for elementwise arithmetic and activation functions.
//
// Inputs are drawn where each function is smooth: ops with a kink at 0 (abs, relu, elu) get
// values at least 0.1 away from 0, and ops defined only for x > 0 (log, sqrt, fractional pow,
// the divisor of div) get values in [0.5, 2). Central differences with eps = 1e-6 then see a
// smooth function, so the 1e-6 gradcheck bound is meaningful.
#include <fmt/format.h>

#include "autograd/registry/registry.h"

namespace attn {

namespace {

enum class Domain {
  kAny,           // standard normal, times a scale
  kAwayFromZero,  // standard normal times a scale, pushed 0.1 further from 0
  kPositive,      // uniform in [0.5, 2)
};

Tensor sample(const Shape& shape, Generator& g, Domain domain, double scale = 1.0) {
  if (domain == Domain::kPositive) return Tensor::rand(shape, g, 0.5, 2.0);
  Tensor t = Tensor::randn(shape, g, scale);
  if (domain == Domain::kAwayFromZero)
    for (int64_t i = 0; i < t.numel(); ++i) t[i] += t[i] >= 0 ? real(0.1) : real(-0.1);
  return t;
}

std::string shape_tag(const Shape& s) {
  if (s.empty()) return "rank0";
  std::string tag;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) tag += 'x';
    tag += std::to_string(s[i]);
  }
  return tag;
}

// One row for a one-input op: x drawn from `domain` with shape (2,3,4) (24 elements).
void unary(std::vector<OpCase>& rows,
           std::string name,
           std::string torch,
           Domain domain,
           double scale,
           std::function<Var(const Var&)> f) {
  rows.push_back({std::move(name), std::move(torch),
                  [domain, scale](Generator& g) {
                    return std::vector{float_input("x", sample({2, 3, 4}, g, domain, scale))};
                  },
                  [f = std::move(f)](const std::vector<Var>& v) { return f(v[0]); }});
}

// Rows for a broadcasting binary op over shape pairs that exercise every broadcasting case:
// equal shapes, b missing leading axes, b with extent-1 axes, a broadcast instead of b, both
// broadcast at once, and a rank-0 operand.
void binary(std::vector<OpCase>& rows,
            const std::string& op,
            const std::string& symbol,
            Domain b_domain,
            Var (*f)(const Var&, const Var&)) {
  const std::vector<std::pair<Shape, Shape>> pairs = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}}, {{2, 3, 4}, {3, 1}}, {{2, 3, 4}, {1, 4}},
      {{4}, {2, 3, 4}},       {{3, 1}, {1, 4}}, {{}, {2, 3}},        {{2, 1, 4}, {3, 1}}};
  for (const auto& [sa, sb] : pairs)
    rows.push_back({fmt::format("{}_{}_{}", op, shape_tag(sa), shape_tag(sb)), "a " + symbol + " b",
                    [sa = sa, sb = sb, b_domain](Generator& g) {
                      return std::vector{float_input("a", sample(sa, g, Domain::kAny)),
                                         float_input("b", sample(sb, g, b_domain))};
                    },
                    [f](const std::vector<Var>& v) { return f(v[0], v[1]); }});
}

}  // namespace

std::vector<OpCase> elementwise_cases() {
  std::vector<OpCase> rows;
  binary(rows, "add", "+", Domain::kAny, add);
  binary(rows, "sub", "-", Domain::kAny, sub);
  binary(rows, "mul", "*", Domain::kAny, mul);
  binary(rows, "div", "/", Domain::kPositive, div);  // divisor away from 0

  using D = Domain;
  unary(rows, "neg", "-x", D::kAny, 1, [](const Var& x) { return neg(x); });
  unary(rows, "add_scalar", "x + 0.5", D::kAny, 1, [](const Var& x) { return add_scalar(x, 0.5); });
  unary(rows, "mul_scalar", "x * -1.5", D::kAny, 1,
        [](const Var& x) { return mul_scalar(x, -1.5); });
  unary(rows, "exp", "torch.exp(x)", D::kAny, 1, [](const Var& x) { return exp(x); });
  unary(rows, "log", "torch.log(x)", D::kPositive, 1, [](const Var& x) { return log(x); });
  unary(rows, "sqrt", "torch.sqrt(x)", D::kPositive, 1, [](const Var& x) { return sqrt(x); });
  // Whole exponents accept any sign; fractional and negative ones need x > 0.
  for (const auto& [p, domain] : std::vector<std::pair<real, D>>{
           {3, D::kAny}, {2, D::kAny}, {0, D::kAny}, {0.5, D::kPositive}, {-1.5, D::kPositive}})
    unary(rows, fmt::format("pow_{}", p), fmt::format("torch.pow(x, {})", p), domain, 1,
          [p = p](const Var& x) { return pow(x, p); });
  unary(rows, "abs", "torch.abs(x)", D::kAwayFromZero, 1, [](const Var& x) { return abs(x); });
  unary(rows, "tanh", "torch.tanh(x)", D::kAny, 2, [](const Var& x) { return tanh(x); });
  // Scale 4 reaches |x| ~ 10: both saturated tails, where the gradient is ~1e-4 or less.
  unary(rows, "sigmoid", "torch.sigmoid(x)", D::kAny, 4, [](const Var& x) { return sigmoid(x); });
  unary(rows, "relu", "torch.relu(x)", D::kAwayFromZero, 1, [](const Var& x) { return relu(x); });
  unary(rows, "gelu", "torch.nn.functional.gelu(x, approximate='none')", D::kAny, 2,
        [](const Var& x) { return gelu(x, GeluApprox::kNone); });
  unary(rows, "gelu_tanh", "torch.nn.functional.gelu(x, approximate='tanh')", D::kAny, 2,
        [](const Var& x) { return gelu(x, GeluApprox::kTanh); });
  unary(rows, "silu", "torch.nn.functional.silu(x)", D::kAny, 3,
        [](const Var& x) { return silu(x); });
  unary(rows, "elu", "torch.nn.functional.elu(x)", D::kAwayFromZero, 2,
        [](const Var& x) { return elu(x); });
  unary(rows, "elu_alpha_0.5", "torch.nn.functional.elu(x, alpha=0.5)", D::kAwayFromZero, 2,
        [](const Var& x) { return elu(x, 0.5); });
  return rows;
}

}  // namespace attn
