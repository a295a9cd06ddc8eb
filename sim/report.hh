#pragma once
// What affine-sim prints and writes: one JSON line per variant (DESIGN.md
// section 9), and with --report a markdown table of simulated figures next
// to the seed's, with SVG plots.

#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/result.hh"
#include "sim/scenario.hh"

namespace affine::sim {

struct scenario_run {
  const scenario* sc = nullptr;
  std::vector<result> results{};  // one per variant, in the scenario's order
  double wall_s = 0;            // host time the whole scenario took
};

// The value of a scenario metric ("throughput_per_s", "p99_us", ...) in a result.
double metric_value(std::string_view metric, const result& r);

// {"bench":..., "variant":..., [x_name: x,] throughput, latency, per-node busy, counters}.
std::string json_line(const scenario& sc, const variant& v, const result& r);

// The markdown report: per scenario, a table of simulated vs seed figures and
// effects, the decisions that fired, and links to the plots.
std::string markdown(std::span<const scenario_run> runs, std::string_view command);

// DIR/report.md and DIR/<scenario>-latency.svg, -util-<variant>.svg,
// -<metric>-vs-<x>.svg. Creates DIR if needed.
std::expected<void, std::string> write_report(const std::string& dir, std::span<const scenario_run> runs,
                                              std::string_view command);

}  // namespace affine::sim
