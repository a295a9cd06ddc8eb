// The seeds' kernel scheduler in the simulator (sim/cfs.cc, kernel.*): each
// mechanism on a small machine, and the same scenario with it removed.

#include <gtest/gtest.h>

#include <string>

#include "tests/sim/sim_test_util.hh"

namespace affine::sim {
namespace {

// One flow on a 2-core machine at CFS with a CPU hog; `extra` adds keys.
std::string machine(const std::string& extra) {
  return R"(
[scenario]
name = "kernel"
metric = "mean_us"
[run]
duration_ms = 200
warmup_ms = 50
[machine]
topology = "pack:1 numa:1 l3:1 core:2 pu:1"
balance_interval_us = 0
[kernel]
cfs = true
hz = 250
[sched]
steal = false
[busy_poll]
budget_us = 0
[nic]
queues = 1
[clients]
turnaround_ns = 20000
[server]
cores = "0-0"
pinned = true
service_ns = 2000
)" + extra;
}

result simulate_text(const std::string& toml, const std::vector<std::string>& sets = {}) {
  auto sc = load_scenario_string(toml, "kernel.toml", sets);
  EXPECT_TRUE(sc.has_value()) << (sc ? "" : sc.error());
  if (!sc) return {};
  auto r = simulate(sc->variants.front().params);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
  return r ? std::move(*r) : result{};
}

double mean_us(const result& r) { return metric_value("mean_us", r); }

// On core 0: the server's core in most tests, and the RX queue's.
constexpr std::string_view hog_on_the_server_core = R"(
[antagonists]
count = 1
cores = "0-0"
)";

// check_preempt_wakeup: a server that slept is placed at most latency / 2
// behind the hog, well past the wakeup granularity, and preempts it at once.
TEST(kernel, a_woken_sleeper_preempts_a_hog_with_wakeup_preemption) {
  const std::string base = machine(std::string(hog_on_the_server_core));
  const result with = simulate_text(base);
  EXPECT_LT(mean_us(with), 100.0);
  EXPECT_GT(with.count.preemptions, 0U);
  // Removed: the server waits for the tick that ends the hog's slice.
  const result without = simulate_text(base, {"kernel.wakeup_preemption=false"});
  EXPECT_GT(mean_us(without), 1000.0);
}

// check_preempt_tick: two pollers that do not yield share one core; the
// tick ends the running one's slice and need_resched ends its busy loop.
TEST(kernel, a_tick_ends_a_pollers_slice_and_its_busy_loop) {
  const std::string base = machine("");
  const std::vector<std::string> two_pollers = {"clients.count=2", "busy_poll.budget_us=50",
                                                "busy_poll.yield_when_runnable=false"};
  const result with = simulate_text(base, two_pollers);
  EXPECT_GT(with.count.poll_exits[static_cast<std::size_t>(policy::poll_exit::resched)], 0U);
  // Both sessions are served, one slice after the other: the one waiting
  // sees a slice's worth of latency.
  EXPECT_GT(with.latency.quantile_ns(0.999), 1'000'000.0);
  // Removed: the first poller keeps the core and the second never runs.
  std::vector<std::string> no_tick = two_pollers;
  no_tick.push_back("kernel.tick_preemption=false");
  const result without = simulate_text(base, no_tick);
  EXPECT_EQ(without.count.poll_exits[static_cast<std::size_t>(policy::poll_exit::resched)], 0U);
  EXPECT_LT(without.latency.quantile_ns(0.999), 200'000.0);
}

// napi_busy_loop: a poller polls its socket's RX queue on another core
// without the interrupt and the idle exit there.
TEST(kernel, a_busy_poller_polls_its_sockets_queue_on_another_core) {
  const std::string base = machine(R"(
[costs]
idle_exit_ns = 20000
)");
  // The only RX queue is on core 0; the server is pinned to core 1.
  const result with =
      simulate_text(base, {"server.cores=1-1", "busy_poll.budget_us=100", "kernel.busy_poll_socket_queue=true"});
  const result without = simulate_text(base, {"server.cores=1-1", "busy_poll.budget_us=100"});
  EXPECT_LT(mean_us(with) + 15.0, mean_us(without));
}

}  // namespace
}  // namespace affine::sim

namespace affine::sim {
namespace {

// idle_cpu() in softirq: with the patch as written (rps = idle, no RX-share
// cap), the RX core itself looks idle while it processes packets, and some
// batches stay on it (Eric Dumazet's warning in seed 003). Without, every
// batch goes to a core that is really idle.
TEST(kernel, a_cpu_in_softirq_looks_idle_to_rps_with_softirq_idle) {
  const std::vector<std::string> scaled = {"run.duration_ms=100", "run.warmup_ms=20"};
  auto handoffs_kept = [&](bool softirq_idle) {
    std::vector<std::string> sets = scaled;
    sets.push_back(std::string("kernel.softirq_idle=") + (softirq_idle ? "true" : "false"));
    const test::outcome o = test::run("seed-003", sets);
    const result& r = o.at("idle", 1);
    const auto chosen = r.count.rps_reasons[static_cast<std::size_t>(policy::rps_reason::idle_llc)];
    std::uint64_t handed = 0;
    for (const std::uint64_t d : r.count.rps_distance) handed += d;
    EXPECT_GT(chosen, 0U);
    return static_cast<double>(chosen - std::min(chosen, handed)) / static_cast<double>(chosen);
  };
  EXPECT_GT(handoffs_kept(true), 0.03);
  EXPECT_LT(handoffs_kept(false), 0.01);
}

}  // namespace
}  // namespace affine::sim

namespace affine::sim {
namespace {

// place_entity's sleeper credit: a task back from a long sleep is placed at
// most latency / 2 behind the queue, so a long burst after it shares the CPU
// with the hog beside it. Without the bound the sleeper keeps its old
// vruntime, far behind, and runs its whole burst first.
TEST(kernel, a_long_sleeper_gets_at_most_half_the_latency_of_credit) {
  const std::string toml = machine(std::string(hog_on_the_server_core));
  const std::vector<std::string> long_bursts = {"server.service_ns=50000000", "clients.turnaround_ns=100000000",
                                                "run.duration_ms=3000", "run.warmup_ms=500"};
  const result with = simulate_text(toml, long_bursts);
  std::vector<std::string> no_credit = long_bursts;
  no_credit.push_back("kernel.sleeper_credit=false");
  const result without = simulate_text(toml, no_credit);
  EXPECT_GT(mean_us(with), 1.3 * mean_us(without));
  EXPECT_LT(mean_us(without), 55'000.0);  // the burst alone, 50 ms
}

}  // namespace
}  // namespace affine::sim
