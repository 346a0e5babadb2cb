// WhereOp: y = cond ? a : b elementwise, with numpy broadcasting of all three (torch.where).
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
    const kernels::BroadcastIndex ic(c.shape(), out), ia(a.shape(), out), ib(b.shape(), out);
    const real *pc = c.data(), *pa = a.data(), *pb = b.data();
    real* py = y.data();
    kernels::parallel_for(y.numel(), 4,
                          [&](int64_t i) { py[i] = pc[ic(i)] != 0 ? pa[ia(i)] : pb[ib(i)]; });
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
