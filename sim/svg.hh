#pragma once
// Line charts as SVG text, written by hand (no plotting library): axes with
// round ticks, a linear or log10 x axis, one polyline per series and a
// legend. Enough for a latency CDF, utilization over time and a figure
// against a swept parameter, in a file any browser opens.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace affine::sim {

struct series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in this order
};

struct chart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;                // x must then be > 0; points at x <= 0 are skipped
  std::optional<double> y_max{};     // fixed top of the y axis (100 for %, 1 for a CDF)
  std::vector<series> lines{};
};

std::string render_svg(const chart& c);

}  // namespace affine::sim
