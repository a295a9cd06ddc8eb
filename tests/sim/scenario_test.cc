// Loading scenarios: the shipped files, defaults, variants and the order in
// which overrides apply.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/sim/sim_test_util.hh"

namespace affine::sim {
namespace {

using test::load_error;
using test::params_of;
using test::scenario_path;

constexpr std::string_view minimal = R"([scenario]
name = "t"
[machine]
topology = "pack:2 numa:1 l3:1 core:4 pu:1"
)";

TEST(scenario, every_shipped_file_loads_with_its_variants) {
  for (const auto& [name, variants] : {std::pair{"seed-000", 6U}, std::pair{"seed-001", 16U},
                                       std::pair{"seed-003", 5U}, std::pair{"seed-004", 8U}}) {
    auto sc = load_scenario(scenario_path(name), {});
    ASSERT_TRUE(sc.has_value()) << sc.error();
    EXPECT_EQ(sc->name, name);
    EXPECT_EQ(sc->variants.size(), variants) << name;
    EXPECT_FALSE(sc->seed_file.empty()) << name;
  }
}

TEST(scenario, a_file_without_variants_runs_one_named_default) {
  auto sc = load_scenario_string(minimal, "t.toml", {});
  ASSERT_TRUE(sc.has_value()) << sc.error();
  ASSERT_EQ(sc->variants.size(), 1U);
  EXPECT_EQ(sc->variants[0].name, "default");
  EXPECT_FALSE(sc->variants[0].x.has_value());
  const sim_params& p = sc->variants[0].params;
  EXPECT_EQ(p.machine.topo.core_count(), 8U);
  EXPECT_EQ(p.machine.reactor_cores.size(), 8U);
  // The policy knobs default to DESIGN.md section 1's values.
  EXPECT_FALSE(p.policy.rx_wakeup_sync);
  EXPECT_EQ(p.policy.wake_affine, policy::wake_affine_mode::task_only);
  EXPECT_EQ(p.policy.busy_poll_budget_ns, 50'000U);
  EXPECT_EQ(p.policy.steal_min_imbalance, (std::array<std::uint32_t, 3>{2, 3, 4}));
}

TEST(scenario, variant_sets_apply_after_the_file_and_command_line_sets_last) {
  const std::string text = std::string(minimal) + R"(
[sched]
wake_affine = "off"
[[variant]]
name = "a"
x = 3
set = ["sched.wake_affine=always", "clients.count=7"]
seed = "12.5"
seed_note = "n"
[[variant]]
name = "b"
baseline = "a"
x = 3
)";
  const std::vector<std::string> cli = {"clients.count=9"};
  auto sc = load_scenario_string(text, "t.toml", cli);
  ASSERT_TRUE(sc.has_value()) << sc.error();
  const variant& a = sc->variants[0];
  EXPECT_EQ(a.params.policy.wake_affine, policy::wake_affine_mode::always);
  EXPECT_EQ(a.params.work.flows, 9U);
  EXPECT_EQ(a.x, 3);
  EXPECT_EQ(a.seed_value, 12.5);
  EXPECT_EQ(a.seed_note, "n");
  const variant& b = sc->variants[1];
  EXPECT_EQ(b.params.policy.wake_affine, policy::wake_affine_mode::off);
  EXPECT_EQ(b.baseline, "a");
}

TEST(scenario, core_lists_and_units_become_params) {
  const sim_params p = params_of(R"([scenario]
name = "t"
[machine]
topology = "pack:2 numa:1 l3:1 core:4 pu:1"
cores = "0-5"
task_quota_us = 250
[nic]
node = 1
queues = 2
rps = "idle"
rps_idle_max_rx_share_pct = 25
[server]
cores = "4-5"
pinned = true
service = "lognormal"
service_ns = 3000
service_cv_pct = 40
[antagonists]
count = 3
cores = "1,3"
slice_us = 7
)");
  EXPECT_EQ(p.machine.reactor_cores.size(), 6U);
  EXPECT_EQ(p.machine.task_quota_ns, 250'000U);
  EXPECT_EQ(p.nic.node, 1U);
  EXPECT_EQ(p.nic.rps, policy::rps_mode::idle);
  EXPECT_EQ(p.policy.rps_idle_max_rx_share, 256U);
  EXPECT_EQ(p.work.server_cores, (std::vector<core_id>{{4}, {5}}));
  EXPECT_TRUE(p.work.server_pinned);
  EXPECT_EQ(p.work.service.kind, dist_kind::lognormal);
  EXPECT_EQ(p.work.service.cv_pct, 40U);
  EXPECT_EQ(p.antagonists.cores, (std::vector<core_id>{{1}, {3}}));
  EXPECT_EQ(p.antagonists.slice_ns, 7000U);
}

TEST(scenario, docs_simulator_md_has_the_current_key_reference) {
  const std::string path = std::string(AFFINE_SIM_SCENARIOS) + "/../../docs/simulator.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::ostringstream doc;
  doc << in.rdbuf();
  const auto spliced = config::splice_key_reference(scenario_schema(), doc.str());
  ASSERT_TRUE(spliced.has_value()) << spliced.error();
  EXPECT_EQ(*spliced, doc.str()) << "run: affine-sim --emit-doc docs/simulator.md";
}

TEST(scenario, the_seed_flag_is_run_seed) {
  const std::vector<std::string> sets = {"run.seed=77"};
  auto sc = load_scenario(scenario_path("seed-004"), sets);
  ASSERT_TRUE(sc.has_value()) << sc.error();
  for (const variant& v : sc->variants) EXPECT_EQ(v.params.run.seed, 77U);
}

// A variant's costs_from takes a calibration file's [costs], then its own set.
TEST(scenario, a_variant_reads_its_costs_from_a_calibration_file) {
  const auto dir = std::filesystem::temp_directory_path() / "affine-sim-calibration-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "c.toml") << "[calibration]\ncommand = \"test\"\n[costs]\nswitch_ns = 42\nidle_exit_ns = 15000\n";
  const std::string text = std::string(R"([scenario]
name = "t"
[machine]
topology = "pack:1 numa:1 l3:1 core:2 pu:1"
[costs]
switch_ns = 800
[[variant]]
name = "kernel"
[[variant]]
name = "affine"
costs_from = "c.toml"
[[variant]]
name = "affine-slow-wake"
costs_from = "c.toml"
set = ["costs.idle_exit_ns=20000"]
)");
  auto sc = load_scenario_string(text, "t.toml", {}, dir.string());
  ASSERT_TRUE(sc.has_value()) << sc.error();
  EXPECT_EQ(sc->variants[0].params.cost.switch_ns, 800U);
  EXPECT_EQ(sc->variants[1].params.cost.switch_ns, 42U);
  EXPECT_EQ(sc->variants[1].params.cost.idle_exit_ns, 15000U);
  EXPECT_EQ(sc->variants[1].params.cost.rx_irq_ns, 1000U);  // not in the file: the schema's default
  EXPECT_EQ(sc->variants[2].params.cost.idle_exit_ns, 20000U);
  // A bad calibration file is named through the variant's key.
  std::ofstream(dir / "bad.toml") << "[calibration]\ncommand = \"test\"\n[costs]\nswitch_nz = 1\n";
  const std::string bad = text.substr(0, text.find("[[variant]]\nname = \"affine-slow")) ;
  auto e = load_scenario_string(bad + "[[variant]]\nname = \"b\"\ncosts_from = \"bad.toml\"\n", "t.toml", {},
                                dir.string());
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().find("t.toml:"), std::string::npos) << e.error();
  EXPECT_NE(e.error().find("costs_from"), std::string::npos) << e.error();
  EXPECT_NE(e.error().find("costs.switch_nz: unknown key"), std::string::npos) << e.error();
  // The shipped file loads.
  auto shipped = config::load_file(calibration_schema(), std::string(AFFINE_SIM_SCENARIOS) + "/../calibration/affine.toml");
  EXPECT_TRUE(shipped.has_value()) << shipped.error();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace affine::sim
