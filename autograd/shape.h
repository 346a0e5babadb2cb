// Shapes: a list of at most four extents, row-major.
//
//   attn::Shape s{2, 3, 4};
//   attn::numel(s);          // 24
//   attn::shape_str(s);      // "(2,3,4)"
//   attn::norm_axis(-1, 3);  // 2
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

using Shape = std::vector<int64_t>;

inline constexpr int kMaxRank = 4;

// Number of elements; 1 for a rank-0 (scalar) shape.
int64_t numel(const Shape& shape);

// "(2,3,4)" — used in every shape error message.
std::string shape_str(const Shape& shape);

// Maps a possibly negative axis into [0, rank); throws naming `op` when out of range.
int norm_axis(int axis, int rank, const char* op = "axis");

// Throws attn::Error if the rank exceeds kMaxRank or an extent is negative.
void check_shape(const Shape& shape, const char* op);

// Row-major strides of a contiguous tensor of this shape.
Shape contiguous_strides(const Shape& shape);

// numpy broadcasting: the shape both a and b broadcast to, or an error naming `op`.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

}  // namespace attn
