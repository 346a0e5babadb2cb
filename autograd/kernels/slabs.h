// Copying blocks of rows: the kernels behind concat, stack and slice (and their gradients).
//
//   // x (2,3,4) sliced on axis 1 to [1,3) is, per outer index o, one contiguous block:
//   kernels::take_slab(x.data(), /*outer=*/2, /*row=*/3 * 4, /*offset=*/1 * 4, /*width=*/2 * 4,
//                      y.data());
//
// Any tensor split at an axis is `outer` rows of `row` contiguous numbers (outer = the product
// of the extents before the axis). A piece along that axis is, in every row, one block of
// `width` numbers starting at `offset`. concat/stack glue pieces side by side (join_slabs);
// slice and the concat/stack gradients cut one piece out (take_slab); the slice gradient puts
// one piece back (put_slab), or adds it into a gradient that already exists (add_slab).
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/real.h"

namespace attn::kernels {

// y (outer, sum widths): row o is parts[0] row o, then parts[1] row o, ... (part i is
// (outer, widths[i])).
void join_slabs(const std::vector<const real*>& parts,
                const std::vector<int64_t>& widths,
                int64_t outer,
                real* y);

// out (outer, width) = src[:, offset : offset + width] with src (outer, row).
void take_slab(
    const real* src, int64_t outer, int64_t row, int64_t offset, int64_t width, real* out);

// dst[:, offset : offset + width] = piece (outer, width), dst (outer, row); the rest untouched.
void put_slab(
    const real* piece, int64_t outer, int64_t row, int64_t offset, int64_t width, real* dst);

// dst[:, offset : offset + width] += piece (outer, width), dst (outer, row); the rest untouched.
void add_slab(
    const real* piece, int64_t outer, int64_t row, int64_t offset, int64_t width, real* dst);

}  // namespace attn::kernels
