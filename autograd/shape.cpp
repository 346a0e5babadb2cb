#include "autograd/shape.h"

#include <fmt/format.h>

#include "autograd/error.h"

namespace attn {

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

int norm_axis(int axis, int rank, const char* op) {
  const int lo = rank == 0 ? -1 : -rank;
  const int hi = rank == 0 ? 0 : rank - 1;
  if (axis < lo || axis > hi)
    throw Error(fmt::format("{}: axis {} is out of range for a tensor of rank {} (valid: {}..{})",
                            op, axis, rank, lo, hi));
  return axis < 0 ? axis + (rank == 0 ? 1 : rank) : axis;
}

void check_shape(const Shape& shape, const char* op) {
  if (shape.size() > static_cast<size_t>(kMaxRank))
    throw Error(fmt::format("{}: rank {} exceeds the maximum rank {} (shape {})", op, shape.size(),
                            kMaxRank, shape_str(shape)));
  for (int64_t d : shape)
    if (d < 0) throw Error(fmt::format("{}: negative extent in shape {}", op, shape_str(shape)));
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right, as numpy does: missing leading axes count as 1.
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(
          fmt::format("{}: shapes {} and {} cannot be broadcast together (axis {}: {} vs {})", op,
                      shape_str(a), shape_str(b), i, da, db));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace attn
