// [reactor], [sched] and [busy_poll] reach the runtime and the policies, and
// reactor.cores is checked against the machine with file and line.

#include <gtest/gtest.h>

#include <sched.h>

#include "affine/config.hh"
#include "reactor/auto_cores.hh"
#include "reactor/from_config.hh"

namespace affine::detail {
namespace {

const topology& two_nodes() {
  static const auto t = topology::from_synthetic("pack:2 numa:1 l3:1 core:4 pu:1");
  return *t;
}

config::settings load(std::string_view text) {
  auto s = config::load_string(config_schema(), text, "affine.toml");
  EXPECT_TRUE(s.has_value()) << s.error();
  return *s;
}

TEST(from_config, DefaultsGiveTheAutoCoresAndTheSeedsDefaults) {
  auto setup = runtime_setup_from(config::defaults(config_schema()), two_nodes());
  ASSERT_TRUE(setup.has_value()) << setup.error();
  // "auto": every core less this machine's load of other processes now.
  EXPECT_EQ(setup->options.cores.size(),
            auto_cores(two_nodes(), allowed_cores(two_nodes()), load_average_1m())->size());
  EXPECT_EQ(setup->options.idle, idle_mode::adaptive);
  EXPECT_EQ(setup->options.spin_us, 50u);
  EXPECT_EQ(setup->options.stack_bytes, 64u * 1024);
  EXPECT_EQ(setup->options.task_quota_us, 500u);
  EXPECT_FALSE(setup->options.preempt);
  EXPECT_EQ(setup->options.quantum_us, 2000u);
  EXPECT_EQ(setup->options.rx_interrupt_us, 0u);
  EXPECT_EQ(setup->options.stall_report_ms, 100u);
  EXPECT_FALSE(setup->policy.rx_wakeup_sync);                                   // seed 000
  EXPECT_EQ(setup->policy.wake_affine, policy::wake_affine_mode::task_only);    // seed 004
  EXPECT_EQ(setup->policy.busy_poll_budget_ns, 50'000u);                        // seed 001
  EXPECT_TRUE(setup->policy.yield_when_runnable);
}

TEST(from_config, EveryKnobReachesItsField) {
  auto setup = runtime_setup_from(load("[reactor]\ncores = \"1,3-4\"\nidle = \"spin\"\nspin_us = 7\n"
                                       "stack_kib = 128\ntask_quota_us = 250\npreempt = \"on\"\n"
                                       "quantum_us = 3000\nrx_interrupt_us = 20\nstall_report_ms = 0\n"
                                       "[sched]\nrx_wakeup_sync = true\nwake_affine = \"always\"\n"
                                       "balance_interval_us = 0\nsteal = false\n"
                                       "[busy_poll]\nbudget_us = 0\nyield_when_runnable = false\n"),
                                  two_nodes());
  ASSERT_TRUE(setup.has_value()) << setup.error();
  const auto& o = setup->options;
  EXPECT_EQ(o.cores, (std::vector<core_id>{core_id{1}, core_id{3}, core_id{4}}));
  EXPECT_EQ(o.idle, idle_mode::spin);
  EXPECT_EQ(o.spin_us, 7u);
  EXPECT_EQ(o.stack_bytes, 128u * 1024);
  EXPECT_EQ(o.task_quota_us, 250u);
  EXPECT_TRUE(o.preempt);
  EXPECT_EQ(o.quantum_us, 3000u);
  EXPECT_EQ(o.rx_interrupt_us, 20u);
  EXPECT_EQ(o.stall_report_ms, 0u);
  EXPECT_EQ(o.balance_interval_us, 0u);
  const auto& p = setup->policy;
  EXPECT_TRUE(p.rx_wakeup_sync);
  EXPECT_EQ(p.wake_affine, policy::wake_affine_mode::always);
  EXPECT_FALSE(p.steal);
  EXPECT_EQ(p.busy_poll_budget_ns, 0u);
  EXPECT_FALSE(p.yield_when_runnable);
}

TEST(from_config, AllIsEveryCoreWhateverTheLoad) {
  auto setup = runtime_setup_from(load("[reactor]\ncores = \"all\"\n"), two_nodes());
  ASSERT_TRUE(setup.has_value()) << setup.error();
  EXPECT_EQ(setup->options.cores.size(), 8u);
}

TEST(from_config, AutoLeavesACoreToEachCpuOtherProcessesKeepBusy) {
  const auto count = [](double load) { return auto_cores(two_nodes(), {}, load)->size(); };
  EXPECT_EQ(count(0), 8u);     // an idle machine: one reactor per core
  EXPECT_EQ(count(0.4), 8u);   // a CPU a fifth busy is still one to run on
  EXPECT_EQ(count(1.6), 6u);   // rounded to whole CPUs
  EXPECT_EQ(count(2.4), 6u);
  EXPECT_EQ(count(7.9), 1u);
  EXPECT_EQ(count(64), 1u);    // never fewer than one
  EXPECT_EQ(count(-1), 8u);
  const auto half = auto_cores(two_nodes(), {}, 4);
  ASSERT_TRUE(half.has_value());
  unsigned on_node1 = 0;  // the cores kept are spread over the nodes
  for (core_id c : *half) on_node1 += two_nodes().core(c).node;
  EXPECT_EQ(on_node1, 2u);
}

TEST(from_config, AutoCountsOnlyTheCoresThisProcessMayUse) {
  // taskset -c on cores 0, 1 (node 0) and 4, 5 (node 1) of 8.
  const std::vector<core_id> allowed = {core_id{0}, core_id{1}, core_id{4}, core_id{5}};
  const auto idle = auto_cores(two_nodes(), allowed, 0);
  ASSERT_TRUE(idle.has_value());
  EXPECT_EQ(*idle, allowed);
  // A machine-wide load of 4 on 8 cores is 2 of this process's 4, and the
  // 2 kept are spread over the nodes.
  const auto loaded = auto_cores(two_nodes(), allowed, 4);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(*loaded, (std::vector<core_id>{core_id{0}, core_id{4}}));
  EXPECT_EQ(auto_cores(two_nodes(), allowed, 100)->size(), 1u);
}

// The real thing: this thread's affinity narrowed to one CPU, on this
// machine's own topology, gives one reactor whatever the load.
TEST(from_config, AutoFollowsTheThreadsCpuAffinity) {
  auto topo = topology::from_system();
  ASSERT_TRUE(topo.has_value()) << topo.error();
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(topo->core(topo->all_cores().front()).os_cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const auto cores = reactor_cores_from(config::defaults(config_schema()), *topo);
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
  ASSERT_TRUE(cores.has_value()) << cores.error();
  EXPECT_EQ(*cores, std::vector<core_id>{topo->all_cores().front()});
}

TEST(from_config, CountOfCoresSpreadsOverNodes) {
  auto setup = runtime_setup_from(load("[reactor]\ncores = 4\n"), two_nodes());
  ASSERT_TRUE(setup.has_value()) << setup.error();
  ASSERT_EQ(setup->options.cores.size(), 4u);
  unsigned on_node1 = 0;
  for (core_id c : setup->options.cores) on_node1 += two_nodes().core(c).node;
  EXPECT_EQ(on_node1, 2u);
}

TEST(from_config, CoresThatDoNotExistNameFileLineAndKey) {
  auto setup = runtime_setup_from(load("# comment\n[reactor]\ncores = \"0-9\"\n"), two_nodes());
  ASSERT_FALSE(setup.has_value());
  EXPECT_EQ(setup.error().rfind("affine.toml:3: reactor.cores: ", 0), 0u) << setup.error();
  EXPECT_NE(setup.error().find("9"), std::string::npos) << setup.error();
}

TEST(from_config, TooManyCoresByCountIsAnError) {
  auto setup = runtime_setup_from(load("[reactor]\ncores = 9\n"), two_nodes());
  ASSERT_FALSE(setup.has_value());
  EXPECT_EQ(setup.error().rfind("affine.toml:2: reactor.cores: ", 0), 0u) << setup.error();
}

}  // namespace
}  // namespace affine::detail
