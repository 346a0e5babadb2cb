// Heatmaps as SVG: one matrix with token labels on both axes and a colour bar, or a grid of
// them (one per attention head) sharing one colour scale.
//
//   attn::experiments::Heatmap h;
//   h.values = attn_weights;                       // (T_query, T_key)
//   h.row_labels = h.col_labels = attn::experiments::display_tokens(chars);
//   h.title = "Self-attention before training";
//   h.x_label = "key (attended to)";  h.y_label = "query (attending)";
//   h.colorbar_label = "attention weight";
//   std::string svg = attn::experiments::heatmap_svg(h);
//   std::string grid = attn::experiments::heatmap_grid_svg({h0, h1, h2, h3}, 4, "Four heads");
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace attn::experiments {

struct Heatmap {
  Tensor values;                                    // (R,C)
  std::vector<std::string> row_labels, col_labels;  // empty: 0, 1, ...
  std::string title, x_label, y_label, colorbar_label;
  std::optional<double> vmin, vmax;  // default: the data's min and max (vmin 0 if data >= 0)
  // Write each value in its cell (only when cells are large enough to read).
  bool annotate = false;
  int precision = 2;
  double cell = 0;  // pixels per cell; 0 = chosen from the matrix size
};

// An attention map with the usual axes: queries down the side, keys along the bottom.
Heatmap attention_heatmap(const Tensor& weights,  // (Tq,Tk)
                          std::vector<std::string> query_labels,
                          std::vector<std::string> key_labels,
                          std::string title);

std::string heatmap_svg(const Heatmap& h);
// Panels laid out `columns` per row, one colour bar for all (from the panels' overall range
// unless the first panel sets vmin/vmax).
std::string heatmap_grid_svg(const std::vector<Heatmap>& panels,
                             int columns,
                             const std::string& title);

}  // namespace attn::experiments
