// PermuteOp: reorders the axes, as an explicit copy (tensors have no strides).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"

namespace attn {

namespace {

std::string dims_str(const std::vector<int>& dims) {
  return fmt::format("({})", fmt::join(dims, ","));
}

// y.shape[i] = x.shape[dims[i]]: walks y in row-major order, reading x through its own strides
// taken in y's axis order. Both are padded to rank 4 with leading extent-1 axes.
Tensor permute_copy(const Tensor& x, const std::vector<int>& dims) {
  const int r = x.rank();
  const Shape xs = contiguous_strides(x.shape());
  Shape out(r);
  std::array<int64_t, kMaxRank> ext{1, 1, 1, 1}, stride{0, 0, 0, 0};
  for (int i = 0; i < r; ++i) {
    out[i] = x.shape()[dims[i]];
    ext[kMaxRank - r + i] = out[i];
    stride[kMaxRank - r + i] = xs[dims[i]];
  }
  Tensor y = Tensor::empty(out);
  const real* px = x.data();
  real* py = y.data();
  kernels::parallel_for(ext[0] * ext[1], ext[2] * ext[3], [&](int64_t ab) {
    const int64_t a = ab / ext[1], b = ab % ext[1];
    real* dst = py + ab * ext[2] * ext[3];
    const real* src = px + a * stride[0] + b * stride[1];
    if (stride[3] == 1) {  // last axis kept (attention's head split/merge): contiguous runs
      for (int64_t c = 0; c < ext[2]; ++c, dst += ext[3])
        std::copy(src + c * stride[2], src + c * stride[2] + ext[3], dst);
      return;
    }
    for (int64_t c = 0; c < ext[2]; ++c)
      for (int64_t d = 0; d < ext[3]; ++d) *dst++ = src[c * stride[2] + d * stride[3]];
  });
  return y;
}

}  // namespace

struct PermuteOp final : Op {
  std::vector<int> dims;  // normalised (non-negative) permutation

  // x (d_0,...,d_{r-1}) -> y (d_dims[0],...,d_dims[r-1]);  y[i_0,...] = x[j] with j[dims[k]] = i_k
  Tensor forward(const Tensor& x, const std::vector<int>& requested) {
    const int r = x.rank();
    if (static_cast<int>(requested.size()) != r)
      throw Error(fmt::format("permute: dims {} has {} entries but x {} has rank {}",
                              dims_str(requested), requested.size(), shape_str(x.shape()), r));
    dims.resize(r);
    std::vector<bool> seen(r, false);
    for (int i = 0; i < r; ++i) {
      dims[i] = norm_axis(requested[i], r, "permute");
      if (seen[dims[i]])
        throw Error(fmt::format("permute: dims {} repeats axis {} (x {}); it must be a permutation",
                                dims_str(requested), dims[i], shape_str(x.shape())));
      seen[dims[i]] = true;
    }
    return permute_copy(x, dims);
  }

  // Moving elements is linear and orthogonal: the adjoint moves them back with the inverse
  // permutation inv (inv[dims[i]] = i), so dx = permute(dy, inv).
  void backward() override {
    std::vector<int> inv(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) inv[dims[i]] = static_cast<int>(i);
    accumulate(0, permute_copy(dy(), inv));
  }

  const char* name() const override { return "permute"; }
};

Var permute(const Var& x, const std::vector<int>& dims) {
  auto op = std::make_unique<PermuteOp>();
  Tensor y = op->forward(x.value(), dims);
  return record(std::move(op), {x}, std::move(y));
}

}  // namespace attn
