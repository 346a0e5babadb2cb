// WhereOp: y = cond ? a : b elementwise, with numpy broadcasting of all three (torch.where).
#include <algorithm>

#include "autograd/functional.h"
#include "autograd/kernels/broadcast.h"

namespace attn {

struct WhereOp final : Op {
  Tensor cond;  // saved condition: it routes the gradient

  // cond (...) of 0/1, a (...), b (...) broadcastable -> y (broadcast shape);
  // y = a where cond != 0, b elsewhere.
  Tensor forward(const Tensor& c, const Tensor& a, const Tensor& b) {
    cond = c;
    const Shape out =
        broadcast_shapes(broadcast_shapes(c.shape(), a.shape(), "where"), b.shape(), "where");
    Tensor y = Tensor::empty(out);
    // Walked as rows (kernels/broadcast.h): each operand's row start once per row, then a plain
    // loop in which each operand advances by its stride (1, or 0 where broadcast).
    const kernels::BroadcastRows plan =
        kernels::broadcast_rows(out, c.shape(), a.shape(), b.shape());
    const kernels::RowStart start_c(plan, 0, c.shape(), out), start_a(plan, 1, a.shape(), out),
        start_b(plan, 2, b.shape(), out);
    const int64_t inner = plan.inner, sc = plan.stride[0], sa = plan.stride[1], sb = plan.stride[2];
    const real *pc = c.data(), *pa = a.data(), *pb = b.data();
    real* py = y.data();
    kernels::parallel_for(plan.rows, 4 * inner, [&](int64_t r) {
      const real *rc = pc + start_c(r), *ra = pa + start_a(r), *rb = pb + start_b(r);
      real* ry = py + r * inner;
      if (sc == 0) {  // one condition for the row (a padding mask): copy from the chosen operand
        const bool take_a = rc[0] != 0;
        const real* src = take_a ? ra : rb;
        if (take_a ? sa : sb)
          std::copy(src, src + inner, ry);
        else
          std::fill(ry, ry + inner, src[0]);
        return;
      }
      for (int64_t j = 0; j < inner; ++j) ry[j] = rc[j] != 0 ? ra[j * sa] : rb[j * sb];
    });
    return y;
  }

  // dy/da = cond and dy/db = 1 - cond (cond is not differentiable):
  // da = sum_to(a.shape, dy * cond),  db = sum_to(b.shape, dy * (1 - cond)).
  void backward() override {
    for (size_t i : {1, 2}) {
      if (!needs_grad(i)) continue;
      const bool keep_when = i == 1;  // a takes the cond != 0 positions, b the others
      const Tensor routed = kernels::broadcast_binary(
          dy(), cond, "where",
          [keep_when](real g, real c) { return (c != 0) == keep_when ? g : 0; });
      accumulate(i, kernels::sum_to_shape(routed, inputs[i].shape()));
    }
  }

  const char* name() const override { return "where"; }
};

Var where(const Tensor& cond, const Var& a, const Var& b) {
  auto op = std::make_unique<WhereOp>();
  Tensor y = op->forward(cond, a.value(), b.value());
  return record(std::move(op), {Var::constant(cond), a, b}, std::move(y));
}

}  // namespace attn
