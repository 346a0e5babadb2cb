// broadcast_binary and sum_to_shape walk broadcasts row by row (kernels/broadcast.h); this checks
// both against the element-by-element definition on shapes that exercise every stride pattern.
#include <doctest/doctest.h>

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

}  // namespace

TEST_SUITE("autograd") {
  TEST_CASE("row-wise broadcasting equals the element-wise definition") {
    const std::pair<Shape, Shape> cases[] = {
        {{2, 3, 4}, {4}},
        {{2, 3, 4}, {3, 1}},
        {{2, 3, 4}, {2, 1, 4}},
        {{2, 3, 4}, {2, 3, 1}},
        {{2, 1, 4}, {1, 3, 1}},
        {{5}, {}},
        {{}, {2, 2}},
        {{3, 1}, {1, 5}},
        {{2, 3, 4, 5}, {3, 1, 5}},
        {{1, 4}, {3, 4}},
        // A bias gradient 130 wide: two whole column blocks (summed in registers) and a ragged
        // one, over more rows than one thread takes.
        {{3, 70, 130}, {130}}};
    Generator gen(3);
    for (const auto& pair : cases) {
      const Shape &sa = pair.first, &sb = pair.second;  // not a binding: CAPTURE is a lambda
      CAPTURE(shape_str(sa));
      CAPTURE(shape_str(sb));
      const Tensor a = Tensor::randn(sa, gen), b = Tensor::randn(sb, gen);
      const Tensor y =
          kernels::broadcast_binary(a, b, "test", [](real x, real z) { return x - 2 * z; });
      CHECK(max_abs_diff(y, reference_binary(a, b)) == 0);
      for (const Shape& target : {sa, sb}) {
        const Tensor s = kernels::sum_to_shape(y, target);
        CHECK(max_abs_diff(s, reference_sum(y, target)) < 1e-5);
      }
    }
  }
}

}  // namespace attn
