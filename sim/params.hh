#pragma once
// Everything one simulated run needs, as plain values: the machine, the NIC,
// the costs, the workload and the policy knobs. The scenario loader fills it
// from a TOML file (scenario.hh); tests may fill it directly. Times are in ns.
// docs/simulator.md explains every field and the source of each cost.

#include <array>
#include <cstdint>
#include <vector>

#include "affine/topology.hh"
#include "reactor/policy/config.hh"
#include "reactor/policy/rps.hh"
#include "sim/random.hh"

namespace affine::sim {

struct machine_params {
  topology topo;
  std::vector<core_id> reactor_cores;  // ascending
  // interrupt: the RX path preempts the running task as soon as a packet
  // arrives (the kernels the seeds ran on); polled: it runs between tasks, at
  // the end of a task's quota (affine's reactor loop).
  bool rx_interrupt = true;
  std::uint64_t task_quota_ns = 500'000;    // a fiber's slice before it yields to waiting ones
  std::uint64_t spin_ns = 0;                // an idle reactor polls this long before it sleeps
  std::uint64_t balance_interval_ns = 1'000'000;  // periodic steal_from on each awake core; 0 = none
  // A busy core with waiting fibers wakes a sleeping one at its balance tick
  // to balance (the kernel's nohz idle-balance kick); without it sleeping
  // cores steal only when something else wakes them.
  bool idle_kick = true;
};

// The seeds' kernel scheduler (CFS, Linux 3.x to 5.x), for the scenarios
// that reproduce a seed: off, a core runs affine's ladder with fixed quotas.
// Each mechanism mirrors a kernel function, named beside it; the defaults are
// the kernel's for a machine of 8 or more CPUs (factor 1 + log2 8 = 4).
struct kernel_params {
  // CFS: tasks carry a vruntime, the run queue picks the smallest, a
  // running task is preempted at a tick once it has run its sched_slice
  // (check_preempt_tick), and slices replace the fixed quotas.
  bool cfs = false;
  std::uint64_t tick_ns = 4'000'000;               // 1 / CONFIG_HZ
  std::uint64_t latency_ns = 24'000'000;           // sysctl_sched_latency
  std::uint64_t min_granularity_ns = 3'000'000;    // sysctl_sched_min_granularity
  std::uint64_t wakeup_granularity_ns = 4'000'000; // sysctl_sched_wakeup_granularity
  // A woken task whose vruntime is more than the wakeup granularity behind
  // the running task's preempts it (check_preempt_wakeup); need_resched
  // then also ends a busy poll (sk_busy_loop's !need_resched()).
  bool wakeup_preemption = true;
  // check_preempt_tick at each tick; off, a task that never sleeps keeps its
  // CPU (the test of the mechanism removed).
  bool tick_preemption = true;
  // A task waking after a sleep is placed at most latency / 2 behind the
  // queue's min_vruntime (place_entity, GENTLE_FAIR_SLEEPERS).
  bool sleeper_credit = true;
  // idle_cpu() is true on a CPU that runs softirq on top of its idle task
  // (seed 003: Eric Dumazet's "a cpu spending 90% of its cycles processing
  // IRQ might be considered 'idle'"); off, a core processing packets is busy.
  bool softirq_idle = false;
  // A busy-polling task polls its socket's own RX queue wherever that queue's
  // interrupt goes (sk_busy_loop -> napi_busy_loop on sk->sk_napi_id; the
  // queue's interrupt stays masked while the poller holds its NAPI); off, it
  // polls the queues of its own core, as affine's reactor does.
  bool busy_poll_socket_queue = false;
};

struct costs {
  std::uint64_t rx_irq_ns = 0;          // interrupt entry and exit, per interrupt (not when polling)
  std::uint64_t rx_driver_ns = 0;       // per packet on the RX queue's core: descriptor, buffer, steering
  std::uint64_t rx_protocol_ns = 0;     // per packet on the processing core: IP, TCP, socket queue
  std::uint64_t rx_per_kib_ns = 0;      // copy cost per KiB received
  std::uint64_t rps_enqueue_ns = 0;     // per packet handed to another core's backlog, on the RX core
  std::uint64_t tx_packet_ns = 0;       // per response packet, on the serving core
  std::uint64_t tx_per_kib_ns = 0;      // per KiB sent
  std::uint64_t switch_ns = 0;          // switching the core to another task
  std::uint64_t wakeup_ns = 0;          // a task that blocked runs again: its sleep and wakeup paths
  std::uint64_t wake_remote_ns = 0;     // a wakeup or a backlog batch reaching another core (inbox + IPI)
  std::uint64_t idle_exit_ns = 0;       // a sleeping core getting back to work
  std::uint64_t steal_ns = 0;           // the thief's cost of taking a fiber from another run queue
  // Cache re-warm when a task runs on another core than last time, and the
  // cost of reading a request processed on another core, by distance
  // (indexed by affine::distance: same_core, same_llc, same_node, remote_node).
  std::array<std::uint64_t, 4> migrate_ns{};
  std::array<std::uint64_t, 4> touch_ns{};
};

struct nic_params {
  unsigned node = 0;
  unsigned queues = 1;
  rxq_placement placement = rxq_placement::local;
  policy::rps_mode rps = policy::rps_mode::off;
  std::uint32_t ring_size = 1024;       // descriptors per RX queue; more waiting packets are dropped
  std::uint64_t one_way_ns = 0;         // client <-> NIC latency each way, without serialization
  std::uint32_t link_gbps = 10;         // serialization of request and response bytes
};

enum class server_mode : std::uint8_t {
  blocking,  // one fiber per flow: it sleeps (or busy-polls) until its request arrives
  polling,   // consumers that do background work and check their flows between chunks (seed 003)
};

struct workload_params {
  bool open_loop = false;
  unsigned flows = 1;                      // closed loop: one client each
  unsigned requests_per_transaction = 1;   // a transaction completes after this many round trips
  distribution turnaround;                 // client time between a response and its next request
  std::uint64_t open_rate_per_s = 0;       // open loop: requests per second over all flows, Poisson
  std::uint32_t request_bytes = 64;
  std::uint32_t response_bytes = 64;
  bool half_round_trip = false;            // report latency as qperf does: half the round trip

  server_mode mode = server_mode::blocking;
  unsigned consumers = 1;                  // polling mode: flow i is served by consumer i % consumers
  std::vector<core_id> server_cores;       // where servers start, round robin
  bool server_pinned = false;              // each server may run only on its start core
  distribution service;                    // CPU per request, TX excluded
  distribution background;                 // polling mode: a chunk of background work
};

struct antagonist_params {
  unsigned count = 0;
  std::vector<core_id> cores;              // their cpuset; they start round robin over it
  std::uint64_t slice_ns = 3'000'000;      // how long a hog runs before others waiting get the core
};

struct run_params {
  std::uint64_t warmup_ns = 200'000'000;
  std::uint64_t duration_ns = 1'000'000'000;  // measured time, after the warmup
  std::uint64_t seed = 1;
  std::uint64_t sample_ns = 50'000'000;       // utilization time-series bucket
};

struct sim_params {
  machine_params machine;
  kernel_params kernel;
  nic_params nic;
  costs cost;
  workload_params work;
  antagonist_params antagonists;
  policy::policy_config policy;
  run_params run;
};

}  // namespace affine::sim
