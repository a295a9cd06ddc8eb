// What affine-sim prints and writes: the JSON line's shape, the markdown
// table with the seed's figures, the files of --report, and the command line.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/sim/sim_test_util.hh"

namespace affine::sim {
namespace {

constexpr std::string_view two = R"([scenario]
name = "demo"
metric = "p99_us"
x_name = "flows"
[run]
duration_ms = 20
warmup_ms = 5
[machine]
topology = "pack:2 numa:1 l3:1 core:2 pu:1"
[[variant]]
name = "a"
x = 1
seed = "100"
[[variant]]
name = "b"
x = 1
baseline = "a"
seed = "50"
seed_note = "halved"
)";

scenario_run run_all(const scenario& sc) {
  scenario_run r{.sc = &sc};
  for (const variant& v : sc.variants) r.results.push_back(*simulate(v.params));
  return r;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(report, json_line_has_bench_variant_x_and_unit_suffixed_figures) {
  auto sc = load_scenario_string(two, "t.toml", {});
  ASSERT_TRUE(sc.has_value()) << sc.error();
  result r;
  r.measured_s = 2;
  r.transactions_per_s = 1000;
  r.requests_per_s = 1000;
  r.latency.add(10'000);
  r.node_busy_pct = {12.34, 0};
  r.count.migrations = 10;
  r.count.steals = {2, 0, 2};
  EXPECT_EQ(json_line(*sc, sc->variants[0], r),
            "{\"bench\":\"demo\",\"variant\":\"a\",\"flows\":1,\"transactions_per_s\":1000.0,\"requests_per_s\":1000.0,"
            "\"p50_us\":10.05,\"p99_us\":10.05,\"mean_us\":10.00,\"node0_busy_pct\":12.3,\"node1_busy_pct\":0.0,"
            "\"migrations_per_s\":5.0,\"remote_migrations_per_s\":0.0,\"steals_per_s\":2.0,\"drops_per_s\":0.0}");
}

TEST(report, markdown_puts_the_seeds_figures_and_effects_beside_the_simulated_ones) {
  auto sc = load_scenario_string(two, "t.toml", {});
  ASSERT_TRUE(sc.has_value()) << sc.error();
  const scenario_run runs[] = {run_all(*sc)};
  const std::string md = markdown(runs, "affine-sim --scenario t.toml");
  EXPECT_NE(md.find("Command: `affine-sim --scenario t.toml`"), std::string::npos);
  EXPECT_NE(md.find("| variant | flows | p99_us simulated | seed | effect simulated | effect seed | node0 busy % | "
                    "node1 busy % | the seed says |"),
            std::string::npos);
  // Variant b: the seed's figure, the seed's effect against a, and its note.
  EXPECT_NE(md.find("| 50.0 | "), std::string::npos);
  EXPECT_NE(md.find(" | -50.0% | "), std::string::npos);
  EXPECT_NE(md.find(" | halved |\n"), std::string::npos);
  EXPECT_NE(md.find("vs a |"), std::string::npos);
  EXPECT_NE(md.find("![latency CDF](demo-latency.svg)"), std::string::npos);
  EXPECT_NE(md.find("![p99_us vs flows](demo-vs-flows.svg)"), std::string::npos);
}

TEST(report, write_report_writes_the_markdown_and_every_plot_it_links) {
  auto sc = load_scenario_string(two, "t.toml", {});
  ASSERT_TRUE(sc.has_value()) << sc.error();
  const scenario_run runs[] = {run_all(*sc)};
  const auto dir = std::filesystem::temp_directory_path() / "affine-sim-report-test";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(write_report(dir.string(), runs, "cmd").has_value());
  const std::string md = slurp(dir / "report.md");
  std::size_t images = 0;
  for (std::size_t p = md.find("]("); p != std::string::npos; p = md.find("](", p + 1)) {
    const std::string name = md.substr(p + 2, md.find(')', p) - p - 2);
    EXPECT_TRUE(slurp(dir / name).starts_with("<svg")) << name;
    ++images;
  }
  EXPECT_EQ(images, 4U);  // latency CDF, utilization per variant (2 nodes), metric vs x
  std::filesystem::remove_all(dir);
}

TEST(report, the_command_line_reports_a_bad_file_and_exits_2) {
  const auto dir = std::filesystem::temp_directory_path() / "affine-sim-cli-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "bad.toml") << "[scenario]\nname = \"x\"\n[machine]\ntopology = \"core:2 pu:1\"\n[nic]\nrps = \"fast\"\n";
  const std::string cmd = std::string(AFFINE_SIM_EXE) + " --scenario " + (dir / "bad.toml").string() + " 2> " +
                          (dir / "err").string() + " > " + (dir / "out").string();
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_EQ(slurp(dir / "err"), "affine-sim: " + (dir / "bad.toml").string() +
                                    ":6: nic.rps: \"fast\" is not allowed (allowed: \"off\", \"hash\", \"flow\", \"idle\")\n");
  EXPECT_EQ(slurp(dir / "out"), "");
  std::filesystem::remove_all(dir);
}

TEST(report, the_command_line_prints_one_json_line_per_variant_and_per_fidelity_row) {
  const auto dir = std::filesystem::temp_directory_path() / "affine-sim-cli-ok-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "t.toml") << two;
  const std::string cmd = std::string(AFFINE_SIM_EXE) + " --scenario " + (dir / "t.toml").string() +
                          " --seed 3 --set run.duration_ms=10 > " + (dir / "out").string();
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  const std::string out = slurp(dir / "out");
  EXPECT_TRUE(out.starts_with("{\"bench\":\"demo\",\"variant\":\"a\",\"flows\":1,"));
  EXPECT_NE(out.find("\n{\"bench\":\"demo\",\"variant\":\"b\",\"flows\":1,"), std::string::npos);
  // b has a baseline and both have seed figures: one fidelity row.
  EXPECT_NE(out.find("\n{\"bench\":\"sim-fidelity\",\"scenario\":\"demo\",\"variant\":\"b\",\"baseline\":\"a\""),
            std::string::npos);
  EXPECT_EQ(std::ranges::count(out, '\n'), 3);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace affine::sim
