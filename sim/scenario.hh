#pragma once
// Scenario files (sim/scenarios/*.toml): one experiment, its variants, and
// the seed's own figures to compare with. The schema is declared once, as
// data, with affine's configuration machinery (affine/config.hh), so a bad
// file stops with FILE:LINE: KEY: WHAT (allowed: ...).
//
// Every variant starts from the file's settings, applies its own `set` list
// (the same PATH=VALUE form as --set), then the command line's --set list.

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "affine/config.hh"
#include "sim/params.hh"

namespace affine::sim {

const config::schema& scenario_schema();
// A calibration file (sim/calibration/*.toml, written by bench/sim/calibrate):
// [calibration] says how it was measured, [costs] holds a scenario's cost keys.
const config::schema& calibration_schema();
std::vector<std::string_view> cost_key_names();

struct variant {
  std::string name;                  // JSON "variant": the knob setting
  std::optional<std::int64_t> x;     // the swept parameter (scenario's x_name), if any
  std::string baseline;              // the variant (same x) this one's effect is measured against
  std::optional<double> seed_value;  // the seed's own figure for this variant, in the metric's unit
  std::string seed_note;             // what the seed says when it gives no number
  sim_params params;
};

struct scenario {
  std::string name;       // JSON "bench"
  std::string source;     // the file it came from
  std::string seed_file;  // the kernel mail in ../shared/seeds/
  std::string summary;
  std::string metric;     // the figure compared with the seed's: throughput_per_s, transactions_per_s, mean_us, p50_us, p99_us
  std::string x_name;     // name of the swept parameter ("sessions"), empty if none
  std::vector<variant> variants;
};

// `sets` are the command line's overrides, applied to every variant last.
std::expected<scenario, std::string> load_scenario(const std::string& path, std::span<const std::string> sets);
// The same from text; `source_name` stands for the file in messages, and
// relative paths in it (machine.xml) are taken from `base_dir`.
std::expected<scenario, std::string> load_scenario_string(std::string_view text, std::string_view source_name,
                                                          std::span<const std::string> sets,
                                                          const std::string& base_dir = ".");

}  // namespace affine::sim
