// Bar charts and line plots as SVG.
//
//   attn::experiments::BarChart b;
//   b.labels = attn::experiments::display_tokens(chars);
//   b.series = {{"weight", row_of_attention}};
//   b.highlight = 5;                                   // drawn red (e.g. the query itself)
//   b.title = "Query 5 ('a')";
//   std::string svg = attn::experiments::bar_chart_svg(b);
//   std::string panels = attn::experiments::bar_panels_svg({b0, b1, b2}, "Per-query attention");
//   b.stacked = true;                                  // parts of a whole: one bar per label
//
//   attn::experiments::LinePlot p;
//   p.series = {{"RNN", ts, rnn_ms}, {"attention", ts, attn_ms}};
//   p.log_x = p.log_y = true;                          // log-log timing plot
//   p.refs = {{attn::experiments::RefLine::kHorizontal, 0.37, "0.99^100"}};
//   std::string svg2 = attn::experiments::line_plot_svg(p);
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attn::experiments {

struct BarSeries {
  std::string name;
  std::vector<double> values;
  std::string colour;  // empty: from the palette
};

struct BarChart {
  std::vector<std::string> labels;  // one per group of bars
  std::vector<BarSeries> series;    // several series = grouped bars with a legend
  std::string title, x_label, y_label;
  int highlight = -1;  // index of a bar of the first series to draw in red
  std::optional<double> y_max;
  double width = 0;      // pixels; 0 = from the number of bars
  bool stacked = false;  // one bar per label, the series stacked on top of each other
};

struct Series {
  std::string name;
  std::vector<double> x, y;
  std::string colour;  // empty: from the palette
  bool dashed = false;
  bool markers = true;
};

struct RefLine {
  enum Kind { kHorizontal, kVertical };
  Kind kind = kHorizontal;
  double value = 0;
  std::string label;
};

struct LinePlot {
  std::vector<Series> series;
  std::vector<RefLine> refs;
  std::string title, x_label, y_label;
  bool log_x = false, log_y = false;  // points <= 0 are skipped on a log axis
  double width = 640, height = 380;
};

std::string bar_chart_svg(const BarChart& chart);
// Charts stacked vertically, sharing the y range.
std::string bar_panels_svg(const std::vector<BarChart>& panels, const std::string& title);
std::string line_plot_svg(const LinePlot& plot);

}  // namespace attn::experiments
