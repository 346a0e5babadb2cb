#include "experiments/report/charts.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "autograd/error.h"
#include "experiments/report/scale.h"
#include "experiments/report/svg.h"
#include "experiments/report/table.h"

namespace attn::experiments {

namespace {

const std::string kRed = "#ef4444";

const std::string& colour_of(const std::string& given, size_t i) {
  return given.empty() ? palette(i) : given;
}

// Width and height of a legend box for these names.
std::pair<double, double> legend_size(const std::vector<std::string>& names) {
  size_t longest = 0;
  for (const auto& n : names) longest = std::max(longest, display_width(n));
  return {34 + static_cast<double>(longest) * 6.6, 6 + 17.0 * static_cast<double>(names.size())};
}

// A legend box with its top-left corner at (x, y).
void legend(Svg& svg,
            double x,
            double y,
            const std::vector<std::string>& names,
            const std::vector<std::string>& colours,
            const std::vector<bool>& dashed) {
  const auto [w, h] = legend_size(names);
  svg.rect(x, y, w, h, "rgba(255,255,255,0.85)", "#bbb");
  for (size_t i = 0; i < names.size(); ++i) {
    const double ty = y + 14 + 17.0 * static_cast<double>(i);
    svg.line(x + 6, ty - 4, x + 26, ty - 4, colours[i], 2.5, dashed[i] ? "5 3" : "");
    svg.text(x + 32, ty, names[i], {.size = 11});
  }
}

struct BarGeometry {
  double left = 56, right = 16, top = 28, bottom;
  double plot_w, plot_h = 130;
  bool rotate;
};

BarGeometry bar_geometry(const BarChart& c) {
  BarGeometry g;
  size_t longest = 0;
  for (const auto& l : c.labels) longest = std::max(longest, display_width(l));
  const double n = static_cast<double>(c.labels.size());
  const double group = std::max(14.0, 10.0 * static_cast<double>(c.series.size()) + 6);
  if (c.stacked && c.series.size() > 1) {  // the legend goes right of the plot, not over it
    std::vector<std::string> names;
    for (const auto& s : c.series) names.push_back(s.name);
    const auto [lw, lh] = legend_size(names);
    g.right = lw + 16;
    g.plot_h = std::max(g.plot_h, lh + 4);
  }
  g.plot_w = c.width > 0 ? c.width - g.left - g.right : std::max(600.0, n * group);
  g.rotate = static_cast<double>(longest) * 6.5 > g.plot_w / std::max(1.0, n);
  g.bottom =
      (g.rotate ? static_cast<double>(longest) * 6.5 + 10 : 18) + (c.x_label.empty() ? 4 : 20);
  return g;
}

double data_max(const std::vector<BarChart>& cs) {
  double m = 0;
  for (const auto& c : cs) {
    if (c.y_max) return *c.y_max;
    for (size_t i = 0; i < c.labels.size(); ++i) {
      double stack = 0;  // the height of bar i when stacked
      for (const auto& s : c.series) {
        const double v = i < s.values.size() ? s.values[i] : 0;
        if (!std::isfinite(v)) continue;
        stack += std::max(v, 0.0);
        m = std::max(m, c.stacked ? stack : v);
      }
    }
  }
  return m > 0 ? m * 1.05 : 1;
}

void draw_bars(Svg& svg, double y0, const BarChart& c, const BarGeometry& g, double ymax) {
  for (const auto& s : c.series)
    if (s.values.size() != c.labels.size())
      throw Error("bar chart '" + c.title + "': series '" + s.name + "' has " +
                  std::to_string(s.values.size()) + " values for " +
                  std::to_string(c.labels.size()) + " labels");
  const double x0 = g.left, py = y0 + g.top;
  auto Y = [&](double v) { return py + g.plot_h * (1 - std::clamp(v / ymax, 0.0, 1.0)); };
  if (!c.title.empty())
    svg.text(x0 + g.plot_w / 2, y0 + 18, c.title, {.size = 13, .anchor = "middle", .bold = true});
  for (double t : nice_ticks(0, ymax, 4)) {
    svg.line(x0, Y(t), x0 + g.plot_w, Y(t), "#e5e7eb");
    svg.text(x0 - 5, Y(t), sig(t, 3), {.size = 10, .anchor = "end", .baseline = "middle"});
  }
  const double n = static_cast<double>(c.labels.size());
  const double group = g.plot_w / std::max(1.0, n);
  const size_t slots = c.stacked ? 1 : std::max<size_t>(1, c.series.size());
  const double bar = group * 0.8 / static_cast<double>(slots);
  for (size_t i = 0; i < c.labels.size(); ++i) {
    const double gx = x0 + group * static_cast<double>(i) + group * 0.1;
    double base = 0;  // stacked: where the next segment starts
    for (size_t s = 0; s < c.series.size(); ++s) {
      const double v = c.series[s].values[i];
      const bool red = s == 0 && static_cast<int>(i) == c.highlight;
      const double lo = c.stacked ? base : 0, hi = lo + (c.stacked ? std::max(v, 0.0) : v);
      const double x = gx + (c.stacked ? 0 : bar * static_cast<double>(s));
      svg.rect(x, Y(hi), bar * 0.92, Y(lo) - Y(hi), red ? kRed : colour_of(c.series[s].colour, s),
               "none", c.labels[i] + (c.stacked ? " " + c.series[s].name : "") + ": " + sig(v, 4));
      base = hi;
    }
    const double lx = x0 + group * (static_cast<double>(i) + 0.5), ly = py + g.plot_h + 5;
    if (g.rotate)
      svg.text(lx, ly, c.labels[i],
               {.size = 10, .anchor = "end", .rotate = -90, .baseline = "middle"});
    else
      svg.text(lx, ly, c.labels[i], {.size = 10, .anchor = "middle", .baseline = "hanging"});
  }
  svg.line(x0, py + g.plot_h, x0 + g.plot_w, py + g.plot_h, "#444");
  svg.line(x0, py, x0, py + g.plot_h, "#444");
  if (!c.y_label.empty())
    svg.text(14, py + g.plot_h / 2, c.y_label, {.size = 11, .anchor = "middle", .rotate = -90});
  if (!c.x_label.empty())
    svg.text(x0 + g.plot_w / 2, y0 + g.top + g.plot_h + g.bottom - 4, c.x_label,
             {.size = 11, .anchor = "middle"});
  if (c.series.size() > 1) {
    std::vector<std::string> names, colours;
    for (size_t s = 0; s < c.series.size(); ++s) {
      names.push_back(c.series[s].name);
      colours.push_back(colour_of(c.series[s].colour, s));
    }
    const double lx = c.stacked ? x0 + g.plot_w + 10 : x0 + g.plot_w - legend_size(names).first - 6;
    legend(svg, lx, py + 2, names, colours, std::vector<bool>(names.size(), false));
  }
}

// Axis mapping for line plots: linear or log10.
struct Axis {
  double lo, hi, pix0, pix1;
  bool log;
  double map(double v) const {
    const double a = log ? std::log10(lo) : lo, b = log ? std::log10(hi) : hi;
    const double t = ((log ? std::log10(v) : v) - a) / (b - a);
    return pix0 + t * (pix1 - pix0);
  }
  std::vector<double> ticks() const { return log ? log_ticks(lo, hi) : nice_ticks(lo, hi, 6); }
};

Axis make_axis(std::vector<double> values, bool log, double p0, double p1) {
  if (log)
    values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !(v > 0); }),
                 values.end());
  values.erase(
      std::remove_if(values.begin(), values.end(), [](double v) { return !std::isfinite(v); }),
      values.end());
  double lo = values.empty() ? (log ? 1 : 0) : *std::min_element(values.begin(), values.end());
  double hi = values.empty() ? (log ? 10 : 1) : *std::max_element(values.begin(), values.end());
  if (log) {
    if (hi <= lo) hi = lo * 10;
    lo = std::pow(10.0, std::log10(lo) - 0.05 * std::log10(hi / lo));
    hi = std::pow(10.0, std::log10(hi) + 0.05 * std::log10(hi / lo));
  } else {
    if (hi <= lo) hi = lo + 1;
    const double pad = 0.04 * (hi - lo);
    lo -= pad;
    hi += pad;
  }
  return {lo, hi, p0, p1, log};
}

}  // namespace

std::string bar_chart_svg(const BarChart& chart) {
  return bar_panels_svg({chart}, "");
}

std::string bar_panels_svg(const std::vector<BarChart>& panels, const std::string& title) {
  if (panels.empty()) throw Error("bar_panels_svg: no panels");
  const double ymax = data_max(panels);
  std::vector<BarGeometry> gs;
  double width = 0, height = title.empty() ? 0 : 30;
  for (const auto& p : panels) {
    gs.push_back(bar_geometry(p));
    width = std::max(width, gs.back().left + gs.back().plot_w + gs.back().right);
    height += gs.back().top + gs.back().plot_h + gs.back().bottom;
  }
  Svg svg(width, height);
  double y = 0;
  if (!title.empty()) {
    svg.text(width / 2, 20, title, {.size = 15, .anchor = "middle", .bold = true});
    y = 30;
  }
  for (size_t i = 0; i < panels.size(); ++i) {
    draw_bars(svg, y, panels[i], gs[i], ymax);
    y += gs[i].top + gs[i].plot_h + gs[i].bottom;
  }
  return svg.str();
}

namespace {

// The plot area inside the margins, with the two axes fitted to every point and reference line.
struct PlotFrame {
  static constexpr double kLeft = 70, kRight = 20, kTop = 34, kBottom = 50;
  Axis x, y;
  double right, bottom;  // the plot area's right and bottom edges in pixels
};

PlotFrame plot_frame(const LinePlot& p) {
  std::vector<double> xs, ys;
  for (const auto& s : p.series) {
    if (s.x.size() != s.y.size())
      throw Error("line plot '" + p.title + "': series '" + s.name + "' has " +
                  std::to_string(s.x.size()) + " x and " + std::to_string(s.y.size()) +
                  " y values");
    xs.insert(xs.end(), s.x.begin(), s.x.end());
    ys.insert(ys.end(), s.y.begin(), s.y.end());
  }
  for (const auto& r : p.refs) (r.kind == RefLine::kHorizontal ? ys : xs).push_back(r.value);
  const double right = p.width - PlotFrame::kRight, bottom = p.height - PlotFrame::kBottom;
  return {make_axis(xs, p.log_x, PlotFrame::kLeft, right),
          make_axis(ys, p.log_y, bottom, PlotFrame::kTop), right, bottom};
}

// The title, the grid with its tick labels, the frame and the dashed reference lines (the axis
// labels come last, after the series: see axis_labels).
void draw_axes(Svg& svg, const LinePlot& p, const PlotFrame& f) {
  const double left = PlotFrame::kLeft, top = PlotFrame::kTop;
  if (!p.title.empty())
    svg.text(p.width / 2, 20, p.title, {.size = 14, .anchor = "middle", .bold = true});
  for (double t : f.x.ticks()) {
    const double x = f.x.map(t);
    svg.line(x, top, x, f.bottom, "#eee");
    svg.text(x, f.bottom + 6, sig(t, 3), {.size = 10, .anchor = "middle", .baseline = "hanging"});
  }
  for (double t : f.y.ticks()) {
    const double y = f.y.map(t);
    svg.line(left, y, f.right, y, "#eee");
    svg.text(left - 6, y, sig(t, 3), {.size = 10, .anchor = "end", .baseline = "middle"});
  }
  svg.rect(left, top, f.right - left, f.bottom - top, "none", "#444");
  for (const auto& r : p.refs) {
    const bool h = r.kind == RefLine::kHorizontal;
    const double v = h ? f.y.map(r.value) : f.x.map(r.value);
    if ((h && p.log_y && r.value <= 0) || (!h && p.log_x && r.value <= 0)) continue;
    if (h) {
      svg.line(left, v, f.right, v, "#888", 1.2, "6 4");
      svg.text(left + 6, v - 4, r.label, {.size = 10, .fill = "#555"});
    } else {
      svg.line(v, top, v, f.bottom, "#888", 1.2, "6 4");
      svg.text(v + 4, top + 12, r.label, {.size = 10, .fill = "#555"});
    }
  }
}

void axis_labels(Svg& svg, const LinePlot& p, const PlotFrame& f) {
  svg.text((PlotFrame::kLeft + f.right) / 2, p.height - 12, p.x_label + (p.log_x ? " (log)" : ""),
           {.size = 12, .anchor = "middle"});
  svg.text(16, (PlotFrame::kTop + f.bottom) / 2, p.y_label + (p.log_y ? " (log)" : ""),
           {.size = 12, .anchor = "middle", .rotate = -90});
}

// The legend's top-left corner: of the corners, then the middles of the sides, the place whose
// box of size (w, h) covers the fewest drawn points.
std::pair<double, double> legend_place(const PlotFrame& f,
                                       double w,
                                       double h,
                                       const std::vector<std::pair<double, double>>& drawn) {
  const double xs[2] = {f.right - w - 6, PlotFrame::kLeft + 6};
  const double ys[3] = {PlotFrame::kTop + 6, f.bottom - h - 6,
                        (PlotFrame::kTop + f.bottom - h) / 2};
  std::pair<double, double> best{xs[0], ys[0]};
  size_t fewest = SIZE_MAX;
  for (double y : ys)
    for (double x : xs) {
      size_t covered = 0;
      for (const auto& [px, py] : drawn)
        covered += px >= x - 4 && px <= x + w + 4 && py >= y - 4 && py <= y + h + 4;
      if (covered < fewest) {
        fewest = covered;
        best = {x, y};
      }
    }
  return best;
}

}  // namespace

std::string line_plot_svg(const LinePlot& p) {
  const PlotFrame f = plot_frame(p);
  Svg svg(p.width, p.height);
  draw_axes(svg, p, f);
  std::vector<std::string> names, colours;
  std::vector<bool> dashed;
  std::vector<std::pair<double, double>> drawn;  // every point, to keep the legend off the data
  for (size_t i = 0; i < p.series.size(); ++i) {
    const auto& s = p.series[i];
    const std::string& col = colour_of(s.colour, i);
    std::vector<std::pair<double, double>> pts;
    for (size_t k = 0; k < s.x.size(); ++k) {
      if ((p.log_x && !(s.x[k] > 0)) || (p.log_y && !(s.y[k] > 0))) continue;
      if (!std::isfinite(s.x[k]) || !std::isfinite(s.y[k])) continue;
      pts.emplace_back(f.x.map(s.x[k]), f.y.map(s.y[k]));
    }
    svg.polyline(pts, col, 2, s.dashed ? "6 4" : "");
    for (size_t k = 0; k < pts.size(); ++k) {  // the points and 9 more along each segment
      drawn.push_back(pts[k]);
      if (k + 1 < pts.size())
        for (int m = 1; m < 10; ++m)
          drawn.emplace_back(pts[k].first + (pts[k + 1].first - pts[k].first) * m / 10,
                             pts[k].second + (pts[k + 1].second - pts[k].second) * m / 10);
    }
    if (s.markers && pts.size() <= 60)
      for (const auto& [x, y] : pts) svg.circle(x, y, 3, col);
    if (!s.name.empty()) {
      names.push_back(s.name);
      colours.push_back(col);
      dashed.push_back(s.dashed);
    }
  }
  if (!names.empty()) {
    const auto [w, h] = legend_size(names);
    const auto [x, y] = legend_place(f, w, h, drawn);
    legend(svg, x, y, names, colours, dashed);
  }
  axis_labels(svg, p, f);
  return svg.str();
}

}  // namespace attn::experiments
