// EmbeddingOp: looks up one row of a weight table per index (F.embedding).
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "autograd/error.h"
#include "autograd/functional.h"
#include "autograd/kernels/parallel.h"

namespace attn {

struct EmbeddingOp final : Op {
  std::vector<int64_t> ids;  // the indices as integers, flattened
  Shape w_shape;

  // weight (V,C), indices (...) of whole numbers in [0,V) -> y (...,C);  y[p, :] = weight[ids[p],
  // :]
  Tensor forward(const Tensor& w, const Tensor& indices) {
    if (w.rank() != 2)
      throw Error(
          fmt::format("embedding: weight must be (V,C) (rank 2), got {}", shape_str(w.shape())));
    w_shape = w.shape();
    const int64_t v = w_shape[0], c = w_shape[1];
    Shape y_shape = indices.shape();
    y_shape.push_back(c);
    if (y_shape.size() > static_cast<size_t>(kMaxRank))
      throw Error(
          fmt::format("embedding: indices {} have rank {}; the output adds an axis, so at "
                      "most rank {} is allowed",
                      shape_str(indices.shape()), indices.rank(), kMaxRank - 1));
    ids.resize(indices.numel());
    for (int64_t p = 0; p < indices.numel(); ++p) {
      const real id = indices[p];
      if (!(id >= 0 && id < static_cast<real>(v)) || id != std::floor(id))
        throw Error(fmt::format(
            "embedding: index {} at flat position {} of indices {} is out of range for a "
            "vocabulary of {} (weight {}); valid ids are whole numbers 0..{}",
            id, p, shape_str(indices.shape()), v, shape_str(w_shape), v - 1));
      ids[p] = static_cast<int64_t>(id);
    }
    Tensor y = Tensor::empty(y_shape);
    const real* pw = w.data();
    real* py = y.data();
    kernels::parallel_for(static_cast<int64_t>(ids.size()), c, [&](int64_t p) {
      std::memcpy(py + p * c, pw + ids[p] * c, sizeof(real) * c);
    });
    return y;
  }

  // y[p, :] = weight[ids[p], :] is a copy, so each row of dy flows back to the row it came
  // from: dweight[v, :] = sum over p with ids[p] == v of dy[p, :] (a scatter-add; repeated ids
  // add up). Serial, because two positions may share an id.
  void backward() override {
    Tensor dw(w_shape);
    const int64_t c = w_shape[1];
    const real* pg = dy().data();
    real* pd = dw.data();
    // Positions sharing a token add into the same row of dw: the threads split the columns.
    const auto n = static_cast<int64_t>(ids.size());
    kernels::parallel_column_blocks(c, n, [&](int64_t j0, int64_t j1) {
      for (int64_t p = 0; p < n; ++p)
        for (int64_t j = j0; j < j1; ++j) pd[ids[p] * c + j] += pg[p * c + j];
    });
    accumulate(0, dw);
  }

  const char* name() const override { return "embedding"; }
};

Var embedding(const Var& weight, const Tensor& indices) {
  auto op = std::make_unique<EmbeddingOp>();
  Tensor y = op->forward(weight.value(), indices);
  return record(std::move(op), {weight}, std::move(y));
}

}  // namespace attn
