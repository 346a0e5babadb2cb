#include "autograd/kernels/broadcast.h"

#include "autograd/error.h"

namespace attn::kernels {

BroadcastIndex::BroadcastIndex(const Shape& in, const Shape& out)
    : rank_(static_cast<int>(out.size())), identity_(in == out) {
  const int offset = rank_ - static_cast<int>(in.size());
  int64_t stride = 1;
  for (int axis = rank_ - 1; axis >= 0; --axis) {
    out_shape_[axis] = out[axis];
    const int in_axis = axis - offset;
    const int64_t extent = in_axis >= 0 ? in[in_axis] : 1;
    in_stride_[axis] = extent == 1 ? 0 : stride;
    stride *= extent;
  }
}

int64_t BroadcastIndex::operator()(int64_t flat_out) const {
  if (identity_) return flat_out;
  int64_t flat_in = 0;
  for (int axis = rank_ - 1; axis >= 0; --axis) {
    const int64_t i = flat_out % out_shape_[axis];
    flat_out /= out_shape_[axis];
    flat_in += i * in_stride_[axis];
  }
  return flat_in;
}

Tensor sum_to_shape(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  broadcast_shapes(shape, grad.shape(), "sum_to_shape");  // validates compatibility
  Tensor out(shape);
  const BroadcastIndex index(shape, grad.shape());
  const real* g = grad.data();
  real* o = out.data();
  // Serial on purpose: many output indices collide, and this is never the hot path.
  for (int64_t i = 0; i < grad.numel(); ++i) o[index(i)] += g[i];
  return out;
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
  if (x.shape() == shape) return x.clone();
  if (broadcast_shapes(x.shape(), shape, "broadcast_to") != shape)
    throw Error("broadcast_to: cannot expand " + shape_str(x.shape()) + " to " + shape_str(shape));
  Tensor y = Tensor::empty(shape);
  const BroadcastIndex index(x.shape(), shape);
  const real* px = x.data();
  real* py = y.data();
  parallel_for(y.numel(), 4, [&](int64_t i) { py[i] = px[index(i)]; });
  return y;
}

}  // namespace attn::kernels
