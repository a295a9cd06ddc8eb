// The fidelity band (docs/simulator.md): the four shipped seed scenarios, at
// their shipped settings, each gain within x1.5 of the seed's own. Only the
// variants the table compares are run, to keep the suite quick.

#include <gtest/gtest.h>

#include <set>

#include "sim/fidelity.hh"
#include "tests/sim/sim_test_util.hh"

namespace affine::sim {
namespace {

TEST(fidelity, every_seed_gain_is_within_its_band_at_the_shipped_settings) {
  std::vector<scenario> loaded;
  for (const char* name : {"seed-000", "seed-001", "seed-003", "seed-004"}) {
    auto sc = load_scenario(test::scenario_path(name), {});
    ASSERT_TRUE(sc.has_value()) << sc.error();
    // Keep the variants with a seed figure and a baseline, and those baselines.
    std::set<std::size_t> keep;
    for (std::size_t i = 0; i < sc->variants.size(); ++i) {
      const variant& v = sc->variants[i];
      if (v.baseline.empty() || !v.seed_value) continue;
      for (std::size_t b = 0; b < sc->variants.size(); ++b) {
        if (sc->variants[b].name == v.baseline && sc->variants[b].x == v.x) {
          keep.insert(i);
          keep.insert(b);
        }
      }
    }
    std::vector<variant> kept;
    for (const std::size_t i : keep) kept.push_back(std::move(sc->variants[i]));
    sc->variants = std::move(kept);
    loaded.push_back(std::move(*sc));
  }
  std::vector<scenario_run> runs;
  for (const scenario& sc : loaded) {
    scenario_run run;
    run.sc = &sc;
    for (const variant& v : sc.variants) {
      auto r = simulate(v.params);
      ASSERT_TRUE(r.has_value()) << r.error();
      run.results.push_back(std::move(*r));
    }
    runs.push_back(std::move(run));
  }
  const std::vector<fidelity_row> rows = fidelity(runs);
  // 000; 001 at 1, 2, 16, 32, 64 sessions; 003; 004 at 32, 64, 96 hogs.
  EXPECT_EQ(rows.size(), 10U);
  for (const fidelity_row& r : rows) {
    EXPECT_TRUE(r.in_band) << fidelity_table(std::span(&r, 1));
  }
}

TEST(fidelity, gains_are_relative_for_throughput_and_factors_for_latency) {
  const auto make = [](const char* name, const char* metric, double base, double after) {
    scenario sc;
    sc.name = name;
    sc.metric = metric;
    sc.variants.resize(2);
    sc.variants[0].name = "a";
    sc.variants[0].seed_value = base;
    sc.variants[1].name = "b";
    sc.variants[1].baseline = "a";
    sc.variants[1].seed_value = after;
    return sc;
  };
  const scenario tput = make("t", "transactions_per_s", 100, 150);
  const scenario lat = make("l", "mean_us", 3000, 20);
  result r100, r180, r2000, r10;
  r100.transactions_per_s = 100;
  r180.transactions_per_s = 180;  // +80 % against the seed's +50 %: x1.6, out of the band
  for (int i = 0; i < 10; ++i) r2000.latency.add(2'000'000);
  for (int i = 0; i < 10; ++i) r10.latency.add(10'000);
  std::vector<scenario_run> runs(2);
  runs[0].sc = &tput;
  runs[0].results = {r100, r180};
  runs[1].sc = &lat;
  runs[1].results = {r2000, r10};
  const std::vector<fidelity_row> rows = fidelity(runs);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_NEAR(rows[0].seed_gain, 0.5, 1e-9);
  EXPECT_NEAR(rows[0].sim_gain, 0.8, 1e-9);
  EXPECT_FALSE(rows[0].in_band);
  EXPECT_TRUE(rows[1].as_factor);
  EXPECT_NEAR(rows[1].seed_gain, 150.0, 1e-9);
  EXPECT_NEAR(rows[1].ratio, 200.0 / 150.0, 0.02);  // histogram buckets: within 1.5 %
  EXPECT_TRUE(rows[1].in_band);
}

}  // namespace
}  // namespace affine::sim
