// The chart layout: a fixed canvas, a plot area with margins for the labels,
// ticks at 1-2-5 steps (powers of ten on a log axis), the legend inside the
// plot's top-left corner.

#include "sim/svg.hh"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace affine::sim {

namespace {

constexpr double width = 760, height = 440;
constexpr double left = 80, right = 20, top = 40, bottom = 60;
constexpr double plot_w = width - left - right, plot_h = height - top - bottom;
constexpr const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#e377c2", "#17becf"};

std::string escape(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

// A step of 1, 2 or 5 times a power of ten that cuts `span` into about five.
double nice_step(double span) {
  if (span <= 0) return 1;
  const double raw = span / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

struct axis {
  double lo = 0, hi = 1;
  bool log = false;
  double to_unit(double v) const {  // 0..1 along the axis
    const double a = log ? std::log10(v) : v;
    return hi == lo ? 0.5 : (a - lo) / (hi - lo);
  }
};

}  // namespace

std::string render_svg(const chart& c) {
  axis x{.log = c.log_x}, y;
  bool any = false;
  double xmin = 0, xmax = 0, ymax = 0;
  for (const series& s : c.lines) {
    for (const auto& [px, py] : s.points) {
      if (c.log_x && px <= 0) continue;
      const double ax = c.log_x ? std::log10(px) : px;
      xmin = any ? std::min(xmin, ax) : ax;
      xmax = any ? std::max(xmax, ax) : ax;
      ymax = std::max(ymax, py);
      any = true;
    }
  }
  if (c.log_x) {
    x.lo = std::floor(xmin);
    x.hi = std::max(std::ceil(xmax), x.lo + 1);
  } else {
    x.lo = std::min(0.0, xmin);
    const double step = nice_step(xmax - x.lo);
    x.hi = std::max(x.lo + step, std::ceil(xmax / step) * step);
  }
  y.hi = c.y_max ? *c.y_max : std::max(1e-9, std::ceil(ymax * 1.05 / nice_step(ymax * 1.05)) * nice_step(ymax * 1.05));

  const auto px = [&](double v) { return left + x.to_unit(v) * plot_w; };
  const auto py = [&](double v) { return top + plot_h - y.to_unit(v) * plot_h; };

  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n",
      width, height, width / 2, escape(c.title));
  // Ticks and grid.
  const auto tick_x = [&](double v, double at) {
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>\n"
                       "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:g}</text>\n",
                       at, top, top + plot_h, top + plot_h + 16, v);
  };
  if (c.log_x) {
    for (double e = x.lo; e <= x.hi + 1e-9; e += 1) tick_x(std::pow(10.0, e), px(std::pow(10.0, e)));
  } else {
    const double step = nice_step(x.hi - x.lo);
    for (double v = x.lo; v <= x.hi + step / 1000; v += step) tick_x(v, px(v));
  }
  const double ystep = nice_step(y.hi);
  for (double v = 0; v <= y.hi + ystep / 1000; v += ystep) {
    out += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
                       left, py(v), left + plot_w, left - 6, py(v) + 4, v);
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", left,
                     top, plot_w, plot_h);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + plot_w / 2, height - 18,
                     escape(c.x_label));
  out += fmt::format("<text x=\"18\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {0})\">{1}</text>\n",
                     top + plot_h / 2, escape(c.y_label));
  // Series and legend.
  for (std::size_t i = 0; i < c.lines.size(); ++i) {
    const series& s = c.lines[i];
    const char* color = palette[i % std::size(palette)];
    std::string pts;
    for (const auto& [vx, vy] : s.points) {
      if (c.log_x && vx <= 0) continue;
      pts += fmt::format("{:.1f},{:.1f} ", px(vx), py(std::min(vy, y.hi)));
    }
    out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n", color, pts);
    if (s.points.size() <= 12) {
      for (const auto& [vx, vy] : s.points) {
        if (c.log_x && vx <= 0) continue;
        out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", px(vx), py(std::min(vy, y.hi)),
                           color);
      }
    }
    const double ly = top + 16 + 16 * static_cast<double>(i);
    out += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"3\"/>\n"
                       "<text x=\"{4}\" y=\"{5:.1f}\">{6}</text>\n",
                       left + 10, ly, left + 30, color, left + 36, ly + 4, escape(s.name));
  }
  out += "</svg>\n";
  return out;
}

}  // namespace affine::sim
