#include "experiments/report/svg.h"

#include <atomic>
#include <cmath>

#include <fmt/format.h>

#include "experiments/report/table.h"

namespace attn::experiments {

std::string px(double v) {
  if (!std::isfinite(v)) v = 0;
  std::string s = fmt::format("{:.2f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

Svg::Svg(double width, double height) : width_(width), height_(height) {}

void Svg::rect(double x,
               double y,
               double w,
               double h,
               const std::string& fill,
               const std::string& stroke,
               const std::string& tooltip) {
  body_ += fmt::format(R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="{}")~", px(x), px(y),
                       px(w), px(h), fill);
  if (stroke != "none") body_ += fmt::format(R"~( stroke="{}")~", stroke);
  if (tooltip.empty())
    body_ += "/>";
  else
    body_ += fmt::format("><title>{}</title></rect>", xml_escape(tooltip));
}

void Svg::line(double x1,
               double y1,
               double x2,
               double y2,
               const std::string& stroke,
               double stroke_width,
               const std::string& dash) {
  body_ += fmt::format(R"~(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}")~",
                       px(x1), px(y1), px(x2), px(y2), stroke, px(stroke_width));
  if (!dash.empty()) body_ += fmt::format(R"~( stroke-dasharray="{}")~", dash);
  body_ += "/>";
}

void Svg::polyline(const std::vector<std::pair<double, double>>& points,
                   const std::string& stroke,
                   double stroke_width,
                   const std::string& dash) {
  std::string pts;
  for (const auto& [x, y] : points) pts += px(x) + "," + px(y) + " ";
  body_ += fmt::format(R"~(<polyline points="{}" fill="none" stroke="{}" stroke-width="{}")~", pts,
                       stroke, px(stroke_width));
  if (!dash.empty()) body_ += fmt::format(R"~( stroke-dasharray="{}")~", dash);
  body_ += R"~( stroke-linejoin="round"/>)~";
}

void Svg::circle(double cx, double cy, double r, const std::string& fill) {
  body_ +=
      fmt::format(R"~(<circle cx="{}" cy="{}" r="{}" fill="{}"/>)~", px(cx), px(cy), px(r), fill);
}

void Svg::text(double x, double y, const std::string& s, const TextStyle& st) {
  body_ += fmt::format(R"~(<text x="{}" y="{}" font-size="{}" text-anchor="{}" fill="{}")~", px(x),
                       px(y), px(st.size), st.anchor, st.fill);
  if (st.bold) body_ += R"~( font-weight="bold")~";
  if (std::string(st.baseline) != "auto")
    body_ += fmt::format(R"~( dominant-baseline="{}")~", st.baseline);
  if (st.rotate != 0)
    body_ += fmt::format(R"~( transform="rotate({} {} {})")~", px(st.rotate), px(x), px(y));
  body_ += fmt::format(">{}</text>", xml_escape(s));
}

void Svg::vertical_gradient_rect(
    double x, double y, double w, double h, const std::vector<std::string>& colours) {
  // Ids must be unique in the whole HTML page, which inlines many figures: count per process.
  static std::atomic<int> next_id{0};
  const std::string id = fmt::format("attn-grad{}", next_id++);
  defs_ += fmt::format(R"~(<linearGradient id="{}" x1="0" y1="1" x2="0" y2="0">)~", id);
  for (size_t i = 0; i < colours.size(); ++i) {
    const double offset = colours.size() == 1 ? 0.0 : double(i) / double(colours.size() - 1);
    defs_ += fmt::format(R"~(<stop offset="{}" stop-color="{}"/>)~", px(offset), colours[i]);
  }
  defs_ += "</linearGradient>";
  body_ += fmt::format(R"~(<rect x="{}" y="{}" width="{}" height="{}" fill="url(#{})"/>)~", px(x),
                       px(y), px(w), px(h), id);
}

std::string Svg::str() const {
  std::string out = fmt::format(
      R"~(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )~"
      R"~(font-family="DejaVu Sans, Helvetica, Arial, sans-serif">)~",
      px(width_), px(height_));
  out += R"~(<rect width="100%" height="100%" fill="white"/>)~";
  if (!defs_.empty()) out += "<defs>" + defs_ + "</defs>";
  return out + body_ + "</svg>\n";
}

}  // namespace attn::experiments
