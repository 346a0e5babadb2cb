// The positions of a row of values from the largest value down: which keys a query prefers,
// which word a row of weights puts first.
//
//   const std::vector<size_t> order = kit::ranking({0.2, 0.5, 0.1, 0.5});   // 1, 3, 0, 2
//   order[0];                        // the largest value's index (equal values: the lower first)
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace attn::experiments::kit {

// 0 .. n-1 sorted by values[i], largest first; equal values keep their index order.
inline std::vector<size_t> ranking(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] > values[b]; });
  return order;
}

}  // namespace attn::experiments::kit
