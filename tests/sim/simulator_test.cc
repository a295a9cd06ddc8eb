// The simulator as a model: same seed, same output; the decisions come from
// the live policy functions (a changed policy config changes the outcome,
// and the reasons counted are the policy's); open loops, polled RX, drops.

#include <gtest/gtest.h>

#include "tests/sim/sim_test_util.hh"

namespace affine::sim {
namespace {

using test::params_of;
using test::run;

// 2 nodes x 4 cores, NIC on node 1 with 4 queues, 16 closed-loop clients.
constexpr std::string_view small = R"([scenario]
name = "small"
[run]
duration_ms = 100
warmup_ms = 20
[machine]
topology = "pack:2 numa:1 l3:1 core:4 pu:1"
[nic]
node = 1
queues = 4
[busy_poll]
budget_us = 0
[clients]
count = 16
turnaround = "exponential"
turnaround_ns = 20000
[server]
service = "exponential"
service_ns = 20000
)";

result simulate_ok(const sim_params& p) {
  auto r = simulate(p);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
  return std::move(*r);
}

std::string json_of(const std::string& name, const std::vector<std::string>& sets) {
  const test::outcome o = run(name, sets);
  std::string out;
  for (std::size_t i = 0; i < o.results.size(); ++i) out += json_line(o.sc, o.sc.variants[i], o.results[i]) + "\n";
  return out;
}

TEST(simulator, same_seed_same_output_other_seed_other_output) {
  const std::vector<std::string> sets = {"run.duration_ms=50", "run.warmup_ms=10", "clients.count=16",
                                         "machine.topology=pack:4 numa:1 l3:1 core:4 pu:1", "nic.queues=4"};
  const std::string first = json_of("seed-000", sets);
  EXPECT_EQ(first, json_of("seed-000", sets));
  std::vector<std::string> other = sets;
  other.push_back("run.seed=2");
  EXPECT_NE(first, json_of("seed-000", other));
}

TEST(simulator, every_request_gets_an_answer_and_the_loop_is_closed) {
  const result r = simulate_ok(params_of(small));
  EXPECT_GT(r.requests_per_s, 0);
  EXPECT_EQ(r.transactions_per_s, r.requests_per_s);  // one request per transaction
  EXPECT_EQ(r.latency.count(), static_cast<std::uint64_t>(r.requests_per_s * r.measured_s));
  // Each client has one request in flight: no more than 16 / (two wire delays + service).
  EXPECT_LT(r.requests_per_s, 16 / 30e-6);
  EXPECT_EQ(r.count.drops, 0U);
  ASSERT_EQ(r.node_busy_pct.size(), 2U);
  EXPECT_EQ(r.node_busy_series[0].size(), 2U);  // 120 ms at 50 ms a sample
}

TEST(simulator, a_changed_policy_config_changes_the_outcome) {
  // The same machine and load; only the policy config differs. The placement
  // reasons counted are the live place_wakeup's.
  sim_params p = params_of(small);
  p.policy.rx_wakeup_sync = true;
  p.policy.wake_affine = policy::wake_affine_mode::always;
  const result always = simulate_ok(p);
  p.policy.wake_affine = policy::wake_affine_mode::task_only;
  const result task_only = simulate_ok(p);
  const auto sync_waker = static_cast<std::size_t>(policy::wake_reason::affine_sync_waker);
  EXPECT_GT(always.count.wake_reasons[sync_waker], 0U);
  EXPECT_EQ(task_only.count.wake_reasons[sync_waker], 0U);
  EXPECT_NE(always.transactions_per_s, task_only.transactions_per_s);

  // seed 000's line in honoured_sync: an RX wakeup is not sync unless configured.
  p.policy.wake_affine = policy::wake_affine_mode::always;
  p.policy.rx_wakeup_sync = false;
  EXPECT_EQ(simulate_ok(p).count.wake_reasons[sync_waker], 0U);

  p.policy.wake_affine = policy::wake_affine_mode::off;
  const result off = simulate_ok(p);
  std::uint64_t total = 0;
  for (const std::uint64_t n : off.count.wake_reasons) total += n;
  EXPECT_EQ(off.count.wake_reasons[static_cast<std::size_t>(policy::wake_reason::no_affine)], total);
}

TEST(simulator, steal_off_means_no_steals) {
  sim_params p = params_of(std::string(small) + "[sched]\nsteal_node = 2\nsteal_machine = 2\n");
  p.work.server_cores = {core_id{4}};  // everyone starts on one core: plenty to steal
  const result on = simulate_ok(p);
  EXPECT_GT(on.count.steals[0] + on.count.steals[1] + on.count.steals[2], 0U);
  p.policy.steal = false;
  const result off = simulate_ok(p);
  EXPECT_EQ(off.count.steals[0] + off.count.steals[1] + off.count.steals[2], 0U);
}

TEST(simulator, busy_poll_exits_are_the_policys_reasons) {
  sim_params p = params_of(small);
  p.policy.busy_poll_budget_ns = 0;
  const result off = simulate_ok(p);
  EXPECT_GT(off.count.poll_exits[static_cast<std::size_t>(policy::poll_exit::off)], 0U);
  p.policy.busy_poll_budget_ns = 10'000;
  const result on = simulate_ok(p);
  EXPECT_EQ(on.count.poll_exits[static_cast<std::size_t>(policy::poll_exit::off)], 0U);
  EXPECT_GT(on.count.poll_exits[static_cast<std::size_t>(policy::poll_exit::budget)], 0U);
}

TEST(simulator, open_loop_below_capacity_serves_the_offered_rate) {
  sim_params p = params_of(small);
  p.work.open_loop = true;
  p.work.open_rate_per_s = 50'000;
  p.run.duration_ns = 400'000'000;
  const result r = simulate_ok(p);
  EXPECT_NEAR(r.requests_per_s, 50'000, 50'000 * 0.03);
}

TEST(simulator, polled_rx_waits_for_the_quota_of_a_hog) {
  // One core runs a CPU hog and owns the RX queue; the server lives elsewhere.
  sim_params p = params_of(std::string(small) + R"([antagonists]
count = 1
cores = "4"
)");
  p.nic.queues = 1;
  p.work.flows = 1;
  p.work.server_cores = {core_id{0}};
  p.machine.task_quota_ns = 200'000;
  p.antagonists.slice_ns = 200'000;
  const result interrupt = simulate_ok(p);
  p.machine.rx_interrupt = false;
  const result polled = simulate_ok(p);
  EXPECT_LT(interrupt.latency.quantile_ns(0.5), 100'000);
  EXPECT_GT(polled.latency.quantile_ns(0.5), 50'000);
  EXPECT_GT(polled.latency.mean_ns(), 3 * interrupt.latency.mean_ns());
}

TEST(simulator, a_full_rx_ring_drops_and_the_client_retransmits) {
  sim_params p = params_of(small);
  p.nic.ring_size = 1;
  p.work.flows = 64;
  p.run.duration_ns = 500'000'000;
  const result r = simulate_ok(p);
  EXPECT_GT(r.count.drops, 0U);
  EXPECT_GT(r.requests_per_s, 0);
  // A retransmitted request waited at least the 200 ms timeout.
  EXPECT_GT(r.latency.quantile_ns(1.0), 200e6);
}

TEST(simulator, a_pinned_server_never_moves) {
  sim_params p = params_of(small);
  p.work.server_pinned = true;
  p.policy.wake_affine = policy::wake_affine_mode::always;
  p.policy.rx_wakeup_sync = true;
  const result r = simulate_ok(p);
  EXPECT_EQ(r.count.migrations, 0U);
  std::uint64_t total = 0;
  for (const std::uint64_t n : r.count.wake_reasons) total += n;
  EXPECT_EQ(r.count.wake_reasons[static_cast<std::size_t>(policy::wake_reason::pinned)], total);
}

TEST(simulator, bad_params_are_refused_with_a_reason) {
  sim_params p = params_of(small);
  p.machine.reactor_cores.clear();
  EXPECT_EQ(simulate(p).error(), "no reactor cores");
  p = params_of(small);
  p.policy.steal_min_imbalance = {1, 3, 4};
  EXPECT_EQ(simulate(p).error(), "steal threshold for llc is 1: allowed 2 or more");
}

}  // namespace
}  // namespace affine::sim
