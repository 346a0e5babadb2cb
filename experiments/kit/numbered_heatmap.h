// An attention matrix small enough to read cell by cell: the heatmap with every weight written
// in its cell, as the worked examples draw theirs (cat-sat-mat, identity-lookup, worked-example).
//
//   Heatmap h = kit::numbered_heatmap(A, words, words, "cat sat mat: attention weights", 80);
//   ctx.figure("attention", heatmap_svg(h), "softmax(Q K^T / sqrt(2)) with Q = K = X");
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "autograd/tensor.h"
#include "experiments/report/heatmap.h"

namespace attn::experiments::kit {

// attention_heatmap(weights, ...) with each value printed to `precision` decimals in square
// cells of `cell` pixels (large enough for the digits).
inline Heatmap numbered_heatmap(const Tensor& weights,  // (Tq,Tk)
                                std::vector<std::string> query_labels,
                                std::vector<std::string> key_labels,
                                std::string title,
                                double cell,
                                int precision = 3) {
  Heatmap h =
      attention_heatmap(weights, std::move(query_labels), std::move(key_labels), std::move(title));
  h.annotate = true;
  h.precision = precision;
  h.cell = cell;
  return h;
}

}  // namespace attn::experiments::kit
