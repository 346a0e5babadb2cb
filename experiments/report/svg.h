// A small SVG writer: the drawing primitives the figures are made of.
//
//   attn::experiments::Svg svg(400, 300);
//   svg.rect(10, 10, 50, 20, "#3b82f6");
//   svg.text(35, 45, "label", {.size = 11, .anchor = "middle"});
//   svg.line(0, 0, 100, 100, "#999", 1, "4 3");   // dashed
//   std::string doc = svg.str();                   // <svg ...>...</svg>, no external references
//
// Figures (heatmaps, bar charts, line plots) are built on this in figures.h. Every text is
// XML-escaped; coordinates are pixels with y pointing down, as in SVG itself.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace attn::experiments {

struct TextStyle {
  double size = 12;
  const char* anchor = "start";  // start | middle | end
  double rotate = 0;             // degrees, about the anchor point
  bool bold = false;
  std::string fill = "#222";
  const char* baseline = "auto";  // auto | middle | hanging
};

class Svg {
 public:
  Svg(double width, double height);

  double width() const { return width_; }
  double height() const { return height_; }

  // `tooltip` becomes a <title> child: hover text in a browser.
  void rect(double x,
            double y,
            double w,
            double h,
            const std::string& fill,
            const std::string& stroke = "none",
            const std::string& tooltip = "");
  void line(double x1,
            double y1,
            double x2,
            double y2,
            const std::string& stroke,
            double stroke_width = 1,
            const std::string& dash = "");
  void polyline(const std::vector<std::pair<double, double>>& points,
                const std::string& stroke,
                double stroke_width = 1.5,
                const std::string& dash = "");
  void circle(double cx, double cy, double r, const std::string& fill);
  void text(double x, double y, const std::string& s, const TextStyle& style = {});
  // A vertical gradient from colours[0] (bottom) to colours.back() (top), for colour bars.
  void vertical_gradient_rect(
      double x, double y, double w, double h, const std::vector<std::string>& colours);
  void raw(const std::string& markup) { body_ += markup; }

  std::string str() const;

 private:
  double width_, height_;
  std::string defs_, body_;
};

// "12.5" with at most 2 decimals: keeps the files small.
std::string px(double v);

}  // namespace attn::experiments
