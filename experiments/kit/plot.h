// A line plot's frame in one call: its title, axis labels and which axes are logarithmic.
//
//   LinePlot p = kit::line_plot("Peak memory", "sequence length T", "MiB", kit::Axes::kLogLog);
//   p.series.push_back({"naive", ts, mib});
//   ctx.figure("peak_memory", line_plot_svg(p), "caption");
#pragma once

#include <string>
#include <utility>

#include "experiments/report/charts.h"

namespace attn::experiments::kit {

enum class Axes { kLinear, kLogX, kLogY, kLogLog };

inline LinePlot line_plot(std::string title,
                          std::string x_label,
                          std::string y_label,
                          Axes axes = Axes::kLinear) {
  LinePlot p;
  p.title = std::move(title);
  p.x_label = std::move(x_label);
  p.y_label = std::move(y_label);
  p.log_x = axes == Axes::kLogX || axes == Axes::kLogLog;
  p.log_y = axes == Axes::kLogY || axes == Axes::kLogLog;
  return p;
}

}  // namespace attn::experiments::kit
