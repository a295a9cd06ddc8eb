// The fidelity table: the seeds' gains against the simulated ones.

#include "sim/fidelity.hh"

#include <cmath>

#include <fmt/format.h>

namespace affine::sim {

namespace {

// A seed effect under this (relative) is "no effect", compared as a factor.
constexpr double no_effect = 0.02;

std::string figure(double v) {
  if (std::fabs(v) >= 1000) return fmt::format("{:.0f}", v);
  if (std::fabs(v) >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::string gain_text(double gain, bool as_factor) {
  return as_factor ? fmt::format("x{:.2f}", gain) : fmt::format("{:+.1f}%", gain * 100);
}

}  // namespace

std::vector<fidelity_row> fidelity(std::span<const scenario_run> runs) {
  std::vector<fidelity_row> rows;
  for (const scenario_run& run : runs) {
    const scenario& sc = *run.sc;
    const bool lower_better = sc.metric.ends_with("_us");
    for (std::size_t i = 0; i < sc.variants.size(); ++i) {
      const variant& v = sc.variants[i];
      if (v.baseline.empty() || !v.seed_value) continue;
      for (std::size_t b = 0; b < sc.variants.size(); ++b) {
        const variant& base = sc.variants[b];
        if (base.name != v.baseline || base.x != v.x || !base.seed_value) continue;
        fidelity_row r{.scenario = sc.name, .variant = v.name, .baseline = base.name, .x_name = sc.x_name, .x = v.x};
        r.seed_base = *base.seed_value;
        r.seed_value = *v.seed_value;
        r.sim_base = metric_value(sc.metric, run.results[b]);
        r.sim_value = metric_value(sc.metric, run.results[i]);
        // Improvement factors: above 1 is better, whatever the metric.
        const double seed_f = lower_better ? r.seed_base / r.seed_value : r.seed_value / r.seed_base;
        const double sim_f = lower_better ? r.sim_base / r.sim_value : r.sim_value / r.sim_base;
        r.as_factor = lower_better || std::fabs(seed_f - 1) < no_effect;
        r.seed_gain = r.as_factor ? seed_f : seed_f - 1;
        r.sim_gain = r.as_factor ? sim_f : sim_f - 1;
        r.ratio = r.seed_gain != 0 ? r.sim_gain / r.seed_gain : 0;
        r.in_band = r.ratio >= 1 / fidelity_band && r.ratio <= fidelity_band;
        rows.push_back(std::move(r));
      }
    }
  }
  return rows;
}

std::string fidelity_json(const fidelity_row& r) {
  std::string out = fmt::format(R"({{"bench":"sim-fidelity","scenario":"{}","variant":"{}","baseline":"{}")",
                                r.scenario, r.variant, r.baseline);
  if (r.x && !r.x_name.empty()) out += fmt::format(R"(,"{}":{})", r.x_name, *r.x);
  out += fmt::format(
      R"(,"seed_base":{:.2f},"seed":{:.2f},"sim_base":{:.2f},"sim":{:.2f},"gain_as":"{}","seed_gain":{:.4f},"sim_gain":{:.4f},"ratio":{:.3f},"in_band":{}}})",
      r.seed_base, r.seed_value, r.sim_base, r.sim_value, r.as_factor ? "factor" : "relative", r.seed_gain,
      r.sim_gain, r.ratio, r.in_band ? "true" : "false");
  return out;
}

std::string fidelity_table(std::span<const fidelity_row> rows) {
  std::string out = fmt::format(
      "| scenario | variant vs baseline | x | seed | simulated | seed gain | simulated gain | ratio | within x{} |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---|\n",
      fidelity_band);
  for (const fidelity_row& r : rows) {
    out += fmt::format("| {} | {} vs {} | {} | {} -> {} | {} -> {} | {} | {} | {:.2f} | {} |\n", r.scenario,
                       r.variant, r.baseline, r.x ? fmt::format("{}={}", r.x_name, *r.x) : "", figure(r.seed_base),
                       figure(r.seed_value), figure(r.sim_base), figure(r.sim_value), gain_text(r.seed_gain, r.as_factor), gain_text(r.sim_gain, r.as_factor), r.ratio,
                       r.in_band ? "yes" : "**no**");
  }
  return out;
}

}  // namespace affine::sim
