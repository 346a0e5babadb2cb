// broadcast_binary, sum_to_shape, broadcast_to and where walk broadcasts row by row, with row
// starts computed without index arithmetic for the same-shape, row, column and scalar patterns
// (kernels/broadcast.h). These tests check all of them, outputs and gradients, against the
// element-by-element definition (BroadcastIndex per element, the generic path), on hand-picked
// shapes and on many random ones.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "autograd/functional.h"
#include "autograd/kernels/broadcast.h"

namespace attn {

namespace {

// y[i] = a[ia(i)] - 2 b[ib(i)], one element at a time.
Tensor reference_binary(const Tensor& a, const Tensor& b) {
  const Shape out = broadcast_shapes(a.shape(), b.shape(), "test");
  const kernels::BroadcastIndex ia(a.shape(), out), ib(b.shape(), out);
  Tensor y(out);
  for (int64_t i = 0; i < y.numel(); ++i) y[i] = a[ia(i)] - 2 * b[ib(i)];
  return y;
}

Tensor reference_sum(const Tensor& g, const Shape& shape) {
  const kernels::BroadcastIndex index(shape, g.shape());
  Tensor out(shape);
  for (int64_t i = 0; i < g.numel(); ++i) out[index(i)] += g[i];
  return out;
}

Tensor reference_expand(const Tensor& x, const Shape& shape) {
  const kernels::BroadcastIndex index(x.shape(), shape);
  Tensor y(shape);
  for (int64_t i = 0; i < y.numel(); ++i) y[i] = x[index(i)];
  return y;
}

// How far two summation orders of g down to `shape` may differ: each output sums k = |g|/|shape|
// terms, and recursive summation errs by at most (k - 1) eps sum|terms| (Higham); two orders:
// twice that. No sum (k = 1): exact.
double sum_tolerance(const Tensor& g, const Shape& shape) {
  Tensor magnitude = g.clone();
  for (int64_t i = 0; i < magnitude.numel(); ++i) magnitude[i] = std::abs(magnitude[i]);
  const Tensor sums = reference_sum(magnitude, shape);
  double largest = 0;
  for (int64_t i = 0; i < sums.numel(); ++i) largest = std::max(largest, double(sums[i]));
  const double k = static_cast<double>(g.numel() / std::max<int64_t>(1, numel(shape)));
  return 2 * std::numeric_limits<real>::epsilon() * (k - 1) * largest;
}

// The same bound for a gradient the tape forms from k rounded products per output (m holds the
// terms' magnitudes): 2 (k + 2) eps times the largest output's sum of magnitudes.
double grad_tolerance(const Tensor& m, const Shape& shape) {
  const Tensor sums = reference_sum(m, shape);
  double largest = 0;
  for (int64_t i = 0; i < sums.numel(); ++i) largest = std::max(largest, double(sums[i]));
  const double k = static_cast<double>(m.numel() / std::max<int64_t>(1, numel(shape)));
  return 2 * std::numeric_limits<real>::epsilon() * (k + 2) * largest;
}

// The pattern of operand k in a plan, as named in kernels/broadcast.h.
std::string pattern(const kernels::BroadcastRows& plan, int k) {
  if (plan.indexed[k]) return "indexed";
  if (plan.stride[k]) return plan.row_step[k] ? "same" : "row";
  return plan.row_step[k] ? "column" : "scalar";
}

// Checks broadcast_binary and both sum_to_shape adjoints of a (sa) against b (sb), and
// broadcast_to of each to the output shape. Returns the patterns the plan used.
std::set<std::string> check_pair(const Shape& sa, const Shape& sb, Generator& gen) {
  CAPTURE(shape_str(sa));
  CAPTURE(shape_str(sb));
  const Tensor a = Tensor::randn(sa, gen), b = Tensor::randn(sb, gen);
  const Tensor y =
      kernels::broadcast_binary(a, b, "test", [](real x, real z) { return x - 2 * z; });
  CHECK(max_abs_diff(y, reference_binary(a, b)) == 0);
  for (const Shape& target : {sa, sb}) {
    const Tensor s = kernels::sum_to_shape(y, target);
    CHECK(max_abs_diff(s, reference_sum(y, target)) <= sum_tolerance(y, target));
  }
  for (const Tensor* t : {&a, &b})
    CHECK(max_abs_diff(kernels::broadcast_to(*t, y.shape()), reference_expand(*t, y.shape())) == 0);
  const kernels::BroadcastRows plan = kernels::broadcast_rows(y.shape(), sa, sb);
  return {pattern(plan, 0), pattern(plan, 1)};
}

// A random shape of rank 0..4 with extents 1..5.
Shape random_shape(Generator& gen) {
  Shape s(static_cast<size_t>(gen.randint(kMaxRank + 1)));
  for (auto& e : s) e = 1 + gen.randint(5);
  return s;
}

// A shape that broadcasts to `out`: some leading axes dropped, some others set to 1.
Shape broadcastable_to(const Shape& out, Generator& gen) {
  const int64_t dropped = gen.randint(static_cast<int64_t>(out.size()) + 1);
  Shape s(out.begin() + dropped, out.end());
  const int64_t mode = gen.randint(4);  // keep all, ones everywhere, or axes at random
  for (auto& e : s)
    if (mode == 1 || (mode >= 2 && gen.uniform() < 0.5)) e = 1;
  return s;
}

}  // namespace

TEST_SUITE("autograd") {
  TEST_CASE("row-wise broadcasting equals the element-wise definition") {
    const std::pair<Shape, Shape> cases[] = {
        {{2, 3, 4}, {4}},           // row
        {{2, 3, 4}, {3, 1}},        // column of a middle axis: indexed
        {{2, 3, 4}, {2, 1, 4}},     // indexed
        {{2, 3, 4}, {2, 3, 1}},     // column
        {{2, 1, 4}, {1, 3, 1}},     // both partial
        {{5}, {}},                  // scalar
        {{}, {2, 2}},               // scalar on the left
        {{3, 1}, {1, 5}},           // outer product: column and row
        {{2, 3, 4, 5}, {3, 1, 5}},  // indexed
        {{1, 4}, {3, 4}},           // row on the left
        {{2, 3, 1}, {1, 1, 1}},     // scalar of rank 3
        // A bias gradient 130 wide: two whole column blocks (summed in registers) and a ragged
        // one, over more rows than one thread takes.
        {{3, 70, 130}, {130}}};
    Generator gen(3);
    std::set<std::string> seen;
    for (const auto& pair : cases) seen.merge(check_pair(pair.first, pair.second, gen));
    CHECK(seen == std::set<std::string>{"same", "row", "column", "scalar", "indexed"});
  }

  TEST_CASE("every broadcast pattern equals the element-wise definition on random shapes") {
    Generator gen(17);
    std::set<std::string> seen;
    for (int trial = 0; trial < 400; ++trial) {
      const Shape out = random_shape(gen);
      const Shape a = broadcastable_to(out, gen), b = broadcastable_to(out, gen);
      if (broadcast_shapes(a, b, "test") != out) continue;  // both dropped the same axis
      seen.merge(gen.uniform() < 0.5 ? check_pair(a, b, gen) : check_pair(b, a, gen));
    }
    CHECK(seen == std::set<std::string>{"same", "row", "column", "scalar", "indexed"});
  }

  TEST_CASE("mul and where through the tape: outputs and gradients on random broadcasts") {
    Generator gen(23);
    for (int trial = 0; trial < 150; ++trial) {
      const Shape out = random_shape(gen);
      const Shape sa = broadcastable_to(out, gen), sb = broadcastable_to(out, gen);
      const Shape sc = broadcastable_to(out, gen);
      if (broadcast_shapes(broadcast_shapes(sa, sb, "t"), sc, "t") != out) continue;
      CAPTURE(shape_str(sa));
      CAPTURE(shape_str(sb));
      CAPTURE(shape_str(sc));
      Tensor cond = Tensor::rand(sc, gen);
      for (int64_t i = 0; i < cond.numel(); ++i) cond[i] = cond[i] < 0.5 ? 1 : 0;
      Var a = Var::parameter(Tensor::randn(sa, gen)), b = Var::parameter(Tensor::randn(sb, gen));
      const Tensor w = Tensor::randn(out, gen);  // loss = sum(w * (where + a * b))
      const Var y = add(where(cond, a, b), mul(a, b));
      sum(mul(y, Var::constant(w))).backward();
      // The same by the definition, in double: y_i = (c_i ? a_i : b_i) + a_i b_i, dy_i = w_i,
      // dL/da_i = w_i ([c_i] + b_i), dL/db_i = w_i ([!c_i] + a_i), each summed over broadcasts.
      const Tensor ea = reference_expand(a.value(), out), eb = reference_expand(b.value(), out);
      const Tensor ec = reference_expand(cond, out);
      int64_t value_errors = 0;
      Tensor ga(out), gb(out), ma(out), mb(out);  // float terms and their rounding magnitudes
      for (int64_t i = 0; i < ea.numel(); ++i) {
        const double x = ea[i], z = eb[i], c = ec[i] != 0 ? 1 : 0;
        const double exact = (c != 0 ? x : z) + x * z;
        // One product and one sum in float: at most 2 eps (|where| + |a b|) off.
        const double bound =
            2 * std::numeric_limits<real>::epsilon() * (std::abs(c != 0 ? x : z) + std::abs(x * z));
        value_errors += std::abs(y.value()[i] - exact) > bound;
        ga[i] = static_cast<real>(w[i] * (c + z));
        gb[i] = static_cast<real>(w[i] * (1 - c + x));
        ma[i] = static_cast<real>(std::abs(w[i]) * (1 + std::abs(z)));
        mb[i] = static_cast<real>(std::abs(w[i]) * (1 + std::abs(x)));
      }
      CHECK(value_errors == 0);
      // The tape rounds each product, sums the two parts separately and adds them: within
      // (k + 2) eps of the exact sum of magnitudes per output; the float reference terms add eps.
      CHECK(max_abs_diff(a.grad(), reference_sum(ga, sa)) <= grad_tolerance(ma, sa));
      CHECK(max_abs_diff(b.grad(), reference_sum(gb, sb)) <= grad_tolerance(mb, sb));
    }
  }
}

}  // namespace attn
