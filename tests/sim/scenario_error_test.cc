// A bad scenario file stops with one line naming the file, the line and the
// key, and the allowed values where there is a list or a range.

#include <gtest/gtest.h>

#include "tests/sim/sim_test_util.hh"

namespace affine::sim {
namespace {

using test::load_error;

constexpr std::string_view head = "[scenario]\nname = \"t\"\n[machine]\ntopology = \"pack:2 numa:1 l3:1 core:4 pu:1\"\n";

std::string with(std::string_view more) { return std::string(head) + std::string(more); }

TEST(scenario_errors, unknown_keys_and_sections_are_named_with_a_suggestion) {
  EXPECT_EQ(load_error(with("[sched]\nrx_wakup_sync = true\n")),
            "bad.toml:6: sched.rx_wakup_sync: unknown key (did you mean \"sched.rx_wakeup_sync\"?)");
  EXPECT_EQ(load_error(with("[antagonist]\ncount = 3\n")),
            "bad.toml:5: antagonist: unknown section (did you mean \"antagonists\"?)");
}

TEST(scenario_errors, values_outside_their_choices_or_range_list_what_is_allowed) {
  EXPECT_EQ(load_error(with("[sched]\nwake_affine = \"sometimes\"\n")),
            "bad.toml:6: sched.wake_affine: \"sometimes\" is not allowed (allowed: \"off\", \"task-only\", \"always\")");
  EXPECT_EQ(load_error(with("[clients]\ncount = 0\n")),
            "bad.toml:6: clients.count: 0 is out of range (allowed: 1..100000)");
  EXPECT_EQ(load_error(with("[server]\nservice = \"gamma\"\n")),
            "bad.toml:6: server.service: \"gamma\" is not allowed (allowed: \"fixed\", \"exponential\", \"lognormal\")");
  EXPECT_EQ(load_error(with("[run]\nduration_ms = \"long\"\n")),
            "bad.toml:6: run.duration_ms: expected an integer, got a string");
}

TEST(scenario_errors, a_missing_required_key_is_named) {
  EXPECT_EQ(load_error("[machine]\ntopology = \"core:2 pu:1\"\n"), "bad.toml: scenario.name: required key is missing");
}

TEST(scenario_errors, the_topology_must_be_given_once_and_parse) {
  EXPECT_EQ(load_error("[scenario]\nname = \"t\"\n"),
            "(default): machine.topology: give exactly one of machine.topology and machine.xml");
  EXPECT_EQ(load_error("[scenario]\nname = \"t\"\n[machine]\ntopology = \"pack:2 banana:3\"\n"),
            "bad.toml:4: machine.topology: bad synthetic topology \"pack:2 banana:3\": hwloc cannot parse it "
            "(expected e.g. \"pack:4 numa:1 l3:8 core:4 pu:1\")");
}

TEST(scenario_errors, cores_are_checked_against_the_topology_and_the_reactors) {
  EXPECT_EQ(load_error(with("cores = \"0-9\"\n")),
            "bad.toml:5: machine.cores: core 9 does not exist: this machine has cores 0-7");
  EXPECT_EQ(load_error(with("cores = \"0-3\"\n[antagonists]\ncount = 1\ncores = \"4\"\n")),
            "bad.toml:8: antagonists.cores: core 4 runs no reactor (machine.cores)");
  EXPECT_EQ(load_error(with("[nic]\nnode = 2\n")), "bad.toml:6: nic.node: node 2 does not exist: this machine has nodes 0-1");
}

TEST(scenario_errors, policy_thresholds_are_checked_by_the_policy_code) {
  EXPECT_EQ(load_error(with("[sched]\nsteal_node = 1\n")),
            "bad.toml:6: sched.steal_node: steal threshold for node is 1: allowed 2 or more (not below the inner "
            "level's)");
}

TEST(scenario_errors, workload_needs_are_named) {
  EXPECT_EQ(load_error(with("[clients]\nmode = \"open\"\n")),
            "(default): clients.rate_per_s: an open loop needs a rate above 0");
  EXPECT_EQ(load_error(with("[server]\nmode = \"polling\"\nbackground_ns = 0\n")),
            "bad.toml:7: server.background_ns: polling consumers need background work above 0 ns");
}

TEST(scenario_errors, variant_errors_name_the_variant_and_its_line) {
  EXPECT_EQ(load_error(with("[[variant]]\nname = \"a\"\nset = [\"sched.wake_afine=off\"]\n")),
            "bad.toml:7: variant[0].set: --set sched.wake_afine=off: unknown key (did you mean "
            "\"sched.wake_affine\"?)");
  EXPECT_EQ(load_error(with("[[variant]]\nname = \"a\"\nset = [\"machine.cores=0-12\"]\n")),
            "bad.toml:7: variant[0].set: --set machine.cores=0-12: core 12 does not exist: this machine has cores "
            "0-7");
  EXPECT_EQ(load_error(with("[[variant]]\nname = \"a\"\n[[variant]]\nname = \"a\"\n")),
            "bad.toml:8: variant[1].name: \"a\" with this x is variant[0] too");
  EXPECT_EQ(load_error(with("[[variant]]\nname = \"a\"\nbaseline = \"b\"\n")),
            "bad.toml:7: variant[0].baseline: \"b\" is not another variant's name");
  EXPECT_EQ(load_error(with("[[variant]]\nname = \"a\"\nseed = \"2.95ms\"\n")),
            "bad.toml:7: variant[0].seed: \"2.95ms\" is not a decimal number (allowed: like \"31748.22\", or \"\")");
}

TEST(scenario_errors, command_line_overrides_are_checked_once) {
  EXPECT_EQ(load_error(head, {"run.seed=-1"}), "--set run.seed=-1: -1 is out of range (allowed: 0..1000000000)");
}

TEST(scenario_errors, a_missing_file_says_so) {
  auto sc = load_scenario("/nonexistent/x.toml", {});
  ASSERT_FALSE(sc.has_value());
  EXPECT_EQ(sc.error(), "/nonexistent/x.toml: cannot open: No such file or directory");
}

}  // namespace
}  // namespace affine::sim
