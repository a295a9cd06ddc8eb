#pragma once
// The fidelity table (docs/simulator.md): for every variant that has a
// baseline and a seed figure on both sides, the seed's gain next to the
// simulated one and their ratio. A scenario reproduces its seed when every
// ratio lies within the band, x1.5 either way.
//
// Gain: for a throughput, the relative change (+43 % is 0.43); for a latency,
// the factor it shrinks by (2.95 ms -> 14.7 us is x200). A seed gain of
// (nearly) nothing, such as seed 001's single session, is compared as a
// factor too, so "no effect" must stay "no effect".

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/report.hh"

namespace affine::sim {

inline constexpr double fidelity_band = 1.5;

struct fidelity_row {
  std::string scenario;
  std::string variant;
  std::string baseline;
  std::string x_name;
  std::optional<std::int64_t> x;
  double seed_base = 0, seed_value = 0;  // the seed's figures, in the metric's unit
  double sim_base = 0, sim_value = 0;
  bool as_factor = false;                 // gains compared as factors, not relative changes
  double seed_gain = 0, sim_gain = 0;
  double ratio = 0;                       // sim_gain / seed_gain
  bool in_band = false;
};

std::vector<fidelity_row> fidelity(std::span<const scenario_run> runs);

// {"bench":"sim-fidelity","scenario":...,"variant":...,...,"ratio":...,"in_band":true}
std::string fidelity_json(const fidelity_row& r);

// The markdown table for docs/simulator.md and report.md.
std::string fidelity_table(std::span<const fidelity_row> rows);

}  // namespace affine::sim
