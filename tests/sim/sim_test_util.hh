#pragma once
// Running a shipped scenario (sim/scenarios/) with overrides, for the tests.

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/report.hh"
#include "sim/scenario.hh"
#include "sim/simulator.hh"

namespace affine::sim::test {

inline std::string scenario_path(const std::string& name) {
  return std::string(AFFINE_SIM_SCENARIOS) + "/" + name + ".toml";
}

struct outcome {
  scenario sc;
  std::vector<result> results;

  // The result of the variant with this name and x; fails the test if absent.
  const result& at(const std::string& name, std::optional<std::int64_t> x = std::nullopt) const {
    for (std::size_t i = 0; i < sc.variants.size(); ++i) {
      if (sc.variants[i].name == name && (!x || sc.variants[i].x == x)) return results[i];
    }
    ADD_FAILURE() << "no variant " << name;
    static const result empty;
    return empty;
  }
  double metric(const std::string& name, std::optional<std::int64_t> x = std::nullopt) const {
    return metric_value(sc.metric, at(name, x));
  }
};

// Loads sim/scenarios/NAME.toml with the overrides, lets `adjust` change
// each variant's parameters (scaling what overrides cannot, since they apply
// to every variant last), and runs every variant.
inline outcome run(const std::string& name, const std::vector<std::string>& sets,
                   const std::function<void(variant&)>& adjust = {}) {
  auto sc = load_scenario(scenario_path(name), sets);
  EXPECT_TRUE(sc.has_value()) << (sc ? "" : sc.error());
  outcome o{sc ? std::move(*sc) : scenario{}, {}};
  for (variant& v : o.sc.variants) {
    if (adjust) adjust(v);
    auto r = simulate(v.params);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
    o.results.push_back(r ? std::move(*r) : result{});
  }
  return o;
}

// A scenario from text, with its first variant's parameters.
inline sim_params params_of(std::string_view toml) {
  auto sc = load_scenario_string(toml, "test.toml", {});
  EXPECT_TRUE(sc.has_value()) << (sc ? "" : sc.error());
  return sc ? sc->variants.front().params : sim_params{};
}

inline std::string load_error(std::string_view toml, const std::vector<std::string>& sets = {}) {
  auto sc = load_scenario_string(toml, "bad.toml", sets);
  return sc ? std::string("(it loaded)") : sc.error();
}

}  // namespace affine::sim::test
