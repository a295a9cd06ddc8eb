#pragma once
// Per-core scheduler counters. Each core writes only its own (single writer,
// relaxed stores); any thread may read them at any time. A snapshot copies
// them into plain numbers.

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace affine {

// Rungs of the reactor loop ladder (STYLE.md: a counter on every rung).
enum class rung : std::uint8_t { poll, backlog, inbox, timers, run, tx_flush, steal, spin, sleep, count_ };

struct core_counters {
  std::uint64_t loop_turns = 0;
  std::array<std::uint64_t, static_cast<std::size_t>(rung::count_)> rung_work{};  // items done per rung
  std::uint64_t fibers_spawned = 0;
  std::uint64_t fibers_finished = 0;
  std::uint64_t fibers_run = 0;       // resumes
  std::uint64_t switches = 0;         // fiber -> reactor switches
  std::uint64_t migrations = 0;       // a fiber resumed here after running elsewhere
  std::uint64_t wakeups_local = 0;    // woken onto this core's queue by this core
  std::uint64_t wakeups_remote = 0;   // woken by this core onto another core's inbox
  std::array<std::uint64_t, 8> placements{};  // by policy::wake_reason
  std::uint64_t placements_idle_sibling = 0;   // idle-sibling search changed the core
  std::array<std::uint64_t, 3> steals{};       // by domain_level: llc, node, machine
  std::uint64_t quota_overruns = 0;   // a fiber ran past 2x the task quota without yielding
  std::uint64_t preempt_yields = 0;   // maybe_yield() gave up the core
  std::uint64_t preemptions = 0;      // a fiber past its quantum was preempted (reactor.preempt)
  std::uint64_t rx_interrupts = 0;    // a running fiber was left for one poll turn (reactor.rx_interrupt_us)
  // Preemptions that were due but refused, retried at the next tick, by
  // reason: inside the runtime or a spinlock, in another object's code
  // (libc, the loader, DPDK, ...), not on the fiber's stack.
  std::array<std::uint64_t, 3> preempt_refused{};
  std::uint64_t stalls = 0;           // a fiber held the core past reactor.stall_report_ms
  std::uint64_t sleeps = 0;           // times the reactor slept in epoll
  std::uint64_t kicks_sent = 0;       // eventfd writes to wake a sleeping core
  std::uint64_t idle_ns = 0;          // time spent spinning or sleeping with nothing to do
  std::uint64_t sleep_ns = 0;         // part of idle_ns spent asleep
  std::uint64_t timers_fired = 0;
  // Idle spins and readers' busy polls planned, by policy::spin_reason
  // (fixed, paying, probe, shared, not_paying, off): the adaptive rule's
  // decisions (docs/tuning.md, "Adaptive polling").
  std::array<std::uint64_t, 6> spin_plans{};
  std::array<std::uint64_t, 6> busy_poll_plans{};
  std::uint64_t cpu_wait_ns = 0;         // the reactor thread waited this long for its CPU (run-queue delay)
  std::uint64_t cpu_shared_samples = 0;  // CPU-share samples that found another task waiting for the CPU
  std::uint64_t wake_ns = 0;             // gauge: the measured sleep/wake cost (a decaying mean)
};

// One line, "c0 turns=... run=... steals=l/n/m ...", for the stats log.
std::string format_counters(unsigned core, const core_counters& c);

// ---- metrics for an exporter (a Prometheus endpoint, a log) -----------------

// One value of one counter or gauge, named and labelled the Prometheus way.
struct metric_sample {
  std::string name;     // "affine_fiber_runs_total"
  std::string help;     // one line, the same for every sample of a name
  bool counter = true;  // false: a gauge
  std::vector<std::pair<std::string, std::string>> labels;  // {{"core", "0"}}
  std::uint64_t value = 0;
};

// Every counter of the running runtime: the scheduler's per core (loop rungs,
// placements by reason, steals by level, sleeps, ...) and, under affine::run,
// each stack's per port and core (traffic, busy-poll exits by reason, drops
// by reason). Samples of one name are adjacent. Call from a fiber.
std::vector<metric_sample> collect_metrics();

namespace detail {
// What affine::run adds to collect_metrics (its stacks); empty: nothing.
void set_metrics_source(std::function<void(std::vector<metric_sample>&)> source);
}  // namespace detail

}  // namespace affine
