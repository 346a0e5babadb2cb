#include "experiments/report/heatmap.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "autograd/error.h"
#include "experiments/report/scale.h"
#include "experiments/report/svg.h"
#include "experiments/report/table.h"

namespace attn::experiments {

namespace {

constexpr double kCharWidth = 0.62;  // average glyph width as a fraction of the font size
constexpr double kTitleHeight = 26;
constexpr double kAxisLabelSpace = 20;
constexpr double kColorbarSpace = 90;

size_t longest(const std::vector<std::string>& labels) {
  size_t n = 0;
  for (const auto& l : labels) n = std::max(n, display_width(l));
  return n;
}

std::vector<std::string> labels_or_indices(const std::vector<std::string>& labels, int64_t n) {
  if (!labels.empty()) return labels;
  std::vector<std::string> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(std::to_string(i));
  return out;
}

// Where everything of one panel goes, relative to the panel's top-left corner.
struct Layout {
  int64_t rows, cols;
  std::vector<std::string> row_labels, col_labels;
  double cell, font, left, top, bottom, width, height;
  bool rotate_cols;
};

Layout layout(const Heatmap& h, double target) {
  if (h.values.rank() != 2)
    throw Error("heatmap '" + h.title + "': needs a (R,C) matrix, got " +
                shape_str(h.values.shape()));
  Layout L;
  L.rows = h.values.size(0);
  L.cols = h.values.size(1);
  L.row_labels = labels_or_indices(h.row_labels, L.rows);
  L.col_labels = labels_or_indices(h.col_labels, L.cols);
  if (static_cast<int64_t>(L.row_labels.size()) != L.rows ||
      static_cast<int64_t>(L.col_labels.size()) != L.cols)
    throw Error(fmt::format("heatmap '{}': {} row / {} column labels for a {} matrix", h.title,
                            L.row_labels.size(), L.col_labels.size(), shape_str(h.values.shape())));
  L.cell = h.cell > 0
               ? h.cell
               : std::clamp(target / static_cast<double>(std::max(L.rows, L.cols)), 8.0, 64.0);
  L.font = std::clamp(L.cell * 0.62, 8.0, 13.0);
  const double col_text = static_cast<double>(longest(L.col_labels)) * L.font * kCharWidth;
  L.rotate_cols = col_text > L.cell * 0.95;
  L.left = kAxisLabelSpace + static_cast<double>(longest(L.row_labels)) * L.font * kCharWidth + 8;
  L.top = kTitleHeight;
  L.bottom = (L.rotate_cols ? col_text + 8 : L.font + 8) + kAxisLabelSpace;
  L.width = L.left + L.cell * static_cast<double>(L.cols) + 8;
  L.height = L.top + L.cell * static_cast<double>(L.rows) + L.bottom;
  return L;
}

void value_range(const std::vector<Heatmap>& hs, double& lo, double& hi) {
  lo = INFINITY;
  hi = -INFINITY;
  for (const auto& h : hs)
    for (int64_t i = 0; i < h.values.numel(); ++i)
      if (std::isfinite(h.values[i])) {
        lo = std::min<double>(lo, h.values[i]);
        hi = std::max<double>(hi, h.values[i]);
      }
  if (!std::isfinite(lo)) lo = hi = 0;
  if (lo >= 0) lo = 0;  // attention weights and other non-negative data start at 0
  if (hs[0].vmin) lo = *hs[0].vmin;
  if (hs[0].vmax) hi = *hs[0].vmax;
  if (hi <= lo) hi = lo + 1;
}

void draw_panel(
    Svg& svg, double x0, double y0, const Heatmap& h, const Layout& L, double lo, double hi) {
  const double gx = x0 + L.left, gy = y0 + L.top;
  if (!h.title.empty())
    svg.text(gx + L.cell * L.cols / 2, y0 + 17, h.title,
             {.size = 13, .anchor = "middle", .bold = true});
  const bool annotate = h.annotate && L.cell >= 26;
  svg.raw(R"(<g shape-rendering="crispEdges">)");  // no hairline seams between cells
  for (int64_t r = 0; r < L.rows; ++r)
    for (int64_t c = 0; c < L.cols; ++c) {
      const double v = h.values[r * L.cols + c];
      const double t = (v - lo) / (hi - lo);
      const std::string tip =
          fmt::format("{} \u2192 {}: {}", L.row_labels[r], L.col_labels[c], sig(v, 4));
      svg.rect(gx + c * L.cell, gy + r * L.cell, L.cell, L.cell, viridis(t), "none", tip);
      if (annotate)
        svg.text(gx + (c + 0.5) * L.cell, gy + (r + 0.5) * L.cell, fixed(v, h.precision),
                 {.size = std::min(12.0, L.cell * 0.3),
                  .anchor = "middle",
                  .fill = viridis_is_dark(t) ? "#fff" : "#111",
                  .baseline = "middle"});
    }
  svg.raw("</g>");
  svg.rect(gx, gy, L.cell * L.cols, L.cell * L.rows, "none", "#444");
  for (int64_t r = 0; r < L.rows; ++r)
    svg.text(gx - 4, gy + (r + 0.5) * L.cell, L.row_labels[r],
             {.size = L.font, .anchor = "end", .baseline = "middle"});
  const double ly = gy + L.rows * L.cell + 4;
  for (int64_t c = 0; c < L.cols; ++c) {
    const double cx = gx + (c + 0.5) * L.cell;
    if (L.rotate_cols)
      svg.text(cx, ly, L.col_labels[c],
               {.size = L.font, .anchor = "end", .rotate = -90, .baseline = "middle"});
    else
      svg.text(cx, ly, L.col_labels[c],
               {.size = L.font, .anchor = "middle", .baseline = "hanging"});
  }
  if (!h.x_label.empty())
    svg.text(gx + L.cell * L.cols / 2, y0 + L.height - 6, h.x_label,
             {.size = 12, .anchor = "middle"});
  if (!h.y_label.empty())
    svg.text(x0 + 13, gy + L.cell * L.rows / 2, h.y_label,
             {.size = 12, .anchor = "middle", .rotate = -90});
}

void draw_colorbar(
    Svg& svg, double x, double y, double height, double lo, double hi, const std::string& label) {
  svg.vertical_gradient_rect(x, y, 14, height, viridis_stops());
  svg.rect(x, y, 14, height, "none", "#444");
  for (double t : nice_ticks(lo, hi, 6)) {
    const double ty = y + height * (1 - (t - lo) / (hi - lo));
    svg.line(x + 14, ty, x + 18, ty, "#444");
    svg.text(x + 21, ty, sig(t, 3), {.size = 10, .baseline = "middle"});
  }
  if (!label.empty())
    svg.text(x + 70, y + height / 2, label, {.size = 12, .anchor = "middle", .rotate = -90});
}

}  // namespace

Heatmap attention_heatmap(const Tensor& weights,
                          std::vector<std::string> query_labels,
                          std::vector<std::string> key_labels,
                          std::string title) {
  Heatmap h;
  h.values = weights;
  h.row_labels = std::move(query_labels);
  h.col_labels = std::move(key_labels);
  h.title = std::move(title);
  h.x_label = "key (attended to)";
  h.y_label = "query (attending)";
  h.colorbar_label = "attention weight";
  return h;
}

std::string heatmap_svg(const Heatmap& h) {
  return heatmap_grid_svg({h}, 1, "");
}

std::string heatmap_grid_svg(const std::vector<Heatmap>& panels,
                             int columns,
                             const std::string& title) {
  if (panels.empty()) throw Error("heatmap_grid_svg: no panels");
  columns = std::max(1, std::min<int>(columns, static_cast<int>(panels.size())));
  double lo, hi;
  value_range(panels, lo, hi);
  std::vector<Layout> layouts;
  double pw = 0, ph = 0;  // the largest panel: every grid slot gets this size
  const double target = columns == 1 ? 440 : 280;  // pixels across the cells of one panel
  for (const auto& p : panels) {
    layouts.push_back(layout(p, target));
    pw = std::max(pw, layouts.back().width);
    ph = std::max(ph, layouts.back().height);
  }
  const int grid_rows = (static_cast<int>(panels.size()) + columns - 1) / columns;
  const double top = title.empty() ? 0 : 30;
  Svg svg(pw * columns + kColorbarSpace, top + ph * grid_rows + 6);
  if (!title.empty())
    svg.text(svg.width() / 2, 20, title, {.size = 15, .anchor = "middle", .bold = true});
  for (size_t i = 0; i < panels.size(); ++i) {
    const double x = pw * static_cast<double>(i % columns);
    const double y = top + ph * static_cast<double>(i / columns);
    draw_panel(svg, x, y, panels[i], layouts[i], lo, hi);
  }
  const Layout& first = layouts[0];
  const double bar_top = top + first.top;
  const double bar_height =
      grid_rows == 1 ? first.cell * first.rows : ph * grid_rows - first.top - first.bottom;
  draw_colorbar(svg, pw * columns + 6, bar_top, bar_height, lo, hi, panels[0].colorbar_label);
  return svg.str();
}

}  // namespace attn::experiments
