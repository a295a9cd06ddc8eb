// The scenario schema: every key a scenario file may hold, with its default,
// range and one line of help. The [costs] defaults are affine's own reactor
// (the calibration table in docs/simulator.md gives the source of each:
// bench/run reactor for the switch, the remote wakeup and the idle exit); a
// seed scenario sets the costs of the seed's machine instead.

#include <charconv>

#include "sim/scenario.hh"

namespace affine::sim {

namespace {

using namespace config;

bool is_decimal(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return s.empty() || (ec == std::errc{} && end == s.data() + s.size() && v >= 0);
}

const string_format decimal_or_none{
    .valid = is_decimal,
    .noun = "a decimal number",
    .allowed = "like \"31748.22\", or \"\"",
};

constexpr int_range ns_range{0, 10'000'000'000};
constexpr int_range us_range{0, 10'000'000};

std::vector<key_spec> distribution_keys(std::string_view kind, std::string_view mean, std::string_view cv,
                                        std::string_view def_kind, std::int64_t def_mean, std::string_view help_kind,
                                        std::string_view help_mean) {
  return {
      enumeration(kind, {"fixed", "exponential", "lognormal"}, def_kind, help_kind),
      integer(mean, ns_range, def_mean, help_mean),
      integer(cv, {0, 1000}, 100, "Coefficient of variation of the lognormal distribution, in percent."),
  };
}

// The [costs] keys, shared by scenario files and calibration files.
std::vector<key_spec> cost_keys() {
  return {
      integer("rx_irq_ns", ns_range, 1000, "Interrupt entry and exit, per interrupt."),
      integer("rx_driver_ns", ns_range, 60, "Per packet on the RX queue's core."),
      integer("rx_protocol_ns", ns_range, 250, "Per packet on the core that processes it (IP, TCP, socket)."),
      integer("rx_per_kib_ns", ns_range, 40, "Per KiB received."),
      integer("rps_enqueue_ns", ns_range, 50, "Per packet handed to another core's backlog."),
      integer("tx_packet_ns", ns_range, 200, "Per response packet."),
      integer("tx_per_kib_ns", ns_range, 40, "Per KiB sent."),
      integer("switch_ns", ns_range, 37, "Switching a core to another task (fiber switch)."),
      integer("wakeup_ns", ns_range, 0,
              "A task that blocked runs again: its sleep and wakeup paths (a fiber's are in "
              "switch_ns and wake_remote_ns)."),
      integer("wake_remote_ns", ns_range, 311, "A wakeup or RPS batch reaching another core."),
      integer("idle_exit_ns", ns_range, 22000, "A sleeping reactor getting back to work."),
      integer("steal_ns", ns_range, 300, "The thief's cost of a steal."),
      integer("migrate_llc_ns", ns_range, 2000, "Cache re-warm after moving inside an LLC."),
      integer("migrate_node_ns", ns_range, 10'000, "Cache re-warm after moving to another LLC of the node."),
      integer("migrate_remote_ns", ns_range, 25'000, "Cache re-warm after moving to another node."),
      integer("touch_llc_ns", ns_range, 100, "Reading a request processed on another core of the LLC."),
      integer("touch_node_ns", ns_range, 300, "... processed in another LLC of the node."),
      integer("touch_remote_ns", ns_range, 600, "... processed on another node."),
  };
}

template <typename T>
void append(std::vector<T>& to, std::vector<T> more) {
  for (T& k : more) to.push_back(std::move(k));
}

schema make_schema() {
  std::vector<key_spec> clients = {
      enumeration("mode", {"closed", "open"}, "closed",
                  "closed: each client sends its next request a turnaround after its response (sysbench threads, "
                  "netperf TCP_RR); open: Poisson arrivals at rate_per_s over all flows."),
      integer("count", {1, 100'000}, 1, "Clients, each with its own flow (connection)."),
      integer("requests_per_transaction", {1, 10'000}, 1,
              "Round trips that make one transaction (sysbench oltp_read_only: 16 queries)."),
  };
  append(clients, distribution_keys("turnaround", "turnaround_ns", "turnaround_cv_pct", "fixed", 0,
                                    "Shape of the client's time between a response and its next request.",
                                    "Mean client turnaround, in ns (client CPU and its stack; wire time is nic.one_way_ns)."));
  append(clients, {
                      integer("rate_per_s", {0, 1'000'000'000}, 0, "Open loop: requests per second over all flows."),
                      integer("request_bytes", {1, 1 << 20}, 64, "Request payload, in bytes."),
                      integer("response_bytes", {1, 1 << 20}, 64, "Response payload, in bytes."),
                      enumeration("latency", {"round-trip", "half-round-trip"}, "round-trip",
                                  "Latency reported per request: the round trip, or half of it as qperf's tcp_lat "
                                  "reports."),
                  });

  std::vector<key_spec> server = {
      enumeration("mode", {"blocking", "polling"}, "blocking",
                  "blocking: one fiber per flow that sleeps (or busy-polls) until its request arrives; polling: "
                  "consumers that do background work and serve their flows between chunks (seed 003)."),
      integer("consumers", {1, 100'000}, 1, "Polling mode: consumer fibers; flow i goes to consumer i mod consumers."),
      cores("cores", core_list{}, "Cores the servers start on, round robin: \"auto\" for all reactor cores, or a list."),
      boolean("pinned", false, "Pin each server to the core it starts on."),
  };
  append(server, distribution_keys("service", "service_ns", "service_cv_pct", "fixed", 1000,
                                   "Shape of the CPU time per request.",
                                   "Mean CPU time per request, in ns, sending the response excluded."));
  append(server, distribution_keys("background", "background_ns", "background_cv_pct", "fixed", 20'000,
                                   "Polling mode: shape of a chunk of background work.",
                                   "Polling mode: mean chunk of background work between two checks, in ns."));

  return schema(
      "affine-sim scenario", {},
      {
          section("scenario", "What the scenario models, and what its figures are compared with.",
                  {
                      string("name", required, "The scenario's name: \"bench\" in the JSON lines."),
                      string("seed_file", "", "The kernel mail in ../shared/seeds/ this scenario reproduces."),
                      string("summary", "", "One line: the seed's experiment and its result."),
                      enumeration("metric", {"throughput_per_s", "transactions_per_s", "mean_us", "p50_us", "p99_us"},
                                  "transactions_per_s", "The figure compared with the seed's."),
                      string("x_name", "", "Name of the parameter the variants sweep (\"sessions\"), if any."),
                  }),
          section("run", "How long, and from which random seed.",
                  {
                      integer("duration_ms", {1, 600'000}, 1000, "Measured simulated time, in ms."),
                      integer("warmup_ms", {0, 600'000}, 200, "Simulated time before measuring, in ms."),
                      integer("seed", {0, 1'000'000'000}, 1, "Random seed; the same seed gives the same output."),
                      integer("sample_ms", {1, 60'000}, 50, "Interval of the utilization time series, in ms."),
                  }),
          section("machine", "The simulated machine and its reactors.",
                  {
                      string("topology", "", "hwloc synthetic topology, like \"pack:4 numa:1 l3:1 core:32 pu:1\"."),
                      string("xml", "", "An hwloc XML export instead (lstopo --of xml), relative to the scenario file."),
                      cores("cores", core_list{}, "Cores that run a reactor: \"auto\" for all, a list, or a count."),
                      enumeration("rx", {"interrupt", "polled"}, "interrupt",
                                  "interrupt: the RX path preempts the running task (the seeds' kernels); polled: it "
                                  "runs between tasks, when a task's quota ends (affine's reactor loop)."),
                      integer("task_quota_us", {1, 1'000'000}, 500,
                              "A fiber's slice before it yields to waiting ones (reactor.task_quota_us)."),
                      integer("spin_us", {0, 1'000'000}, 0, "How long an idle reactor polls before it sleeps."),
                      integer("balance_interval_us", {0, 10'000'000}, 1000,
                              "Periodic balance on each awake core (sched.balance_interval_us); 0 = none."),
                      boolean("idle_kick", true,
                              "A busy core with waiting fibers wakes a sleeping core to balance at its balance tick "
                              "(the kernel's nohz idle-balance kick)."),
                  }),
          section("kernel",
                  "The seeds' kernel scheduler (docs/simulator.md: the kernel model); off, affine's ladder with "
                  "fixed quotas.",
                  {
                      boolean("cfs", false,
                              "CFS: vruntime order, slices of latency / nr_running checked at each tick, wakeup "
                              "preemption; replaces machine.task_quota_us and antagonists.slice_us."),
                      integer("hz", {100, 1000}, 250, "CONFIG_HZ: scheduler ticks per second."),
                      integer("latency_us", {100, 1'000'000}, 24'000,
                              "sysctl_sched_latency (6 ms x (1 + log2 min(cpus, 8)))."),
                      integer("min_granularity_us", {100, 1'000'000}, 3000,
                              "sysctl_sched_min_granularity (0.75 ms x the same factor)."),
                      integer("wakeup_granularity_us", {0, 1'000'000}, 4000,
                              "sysctl_sched_wakeup_granularity (1 ms x the same factor)."),
                      boolean("wakeup_preemption", true,
                              "A woken task more than the wakeup granularity behind the running one preempts it "
                              "(check_preempt_wakeup); need_resched also ends a busy poll."),
                      boolean("tick_preemption", true,
                              "A tick preempts a task that has run its slice (check_preempt_tick); off, a task "
                              "that never sleeps keeps its CPU."),
                      boolean("sleeper_credit", true,
                              "A waking task is placed up to latency / 2 behind min_vruntime (GENTLE_FAIR_SLEEPERS)."),
                      boolean("softirq_idle", false,
                              "idle_cpu() is true on a CPU in softirq on top of its idle task (seed 003, Eric "
                              "Dumazet's warning); off, a core processing packets is busy."),
                      boolean("busy_poll_socket_queue", false,
                              "A busy poller polls its socket's RX queue wherever its interrupt goes "
                              "(napi_busy_loop on sk_napi_id); off, the queues of its own core."),
                  }),
          section("sched", "The placement and balancing knobs (policy_config; DESIGN.md section 1: P1, P4).",
                  {
                      boolean("rx_wakeup_sync", false, "Whether RX-path wakeups are sync (P1, seed 000)."),
                      enumeration("wake_affine", {"off", "task-only", "always"}, "task-only",
                                  "Who may use wake-affine's nr_running == 1 shortcut (P4, seed 004)."),
                      integer("wake_affine_allowance_pct", {0, 100}, 8,
                              "Wake-affine load comparison allowance, in percent."),
                      boolean("steal", true, "Let cores steal waiting fibers."),
                      integer("steal_llc", {0, 1024}, 2, "Imbalance (victim minus thief nr_running) to steal inside an LLC."),
                      integer("steal_node", {0, 1024}, 3, "Imbalance to steal across LLCs of a node."),
                      integer("steal_machine", {0, 1024}, 4, "Imbalance to steal across nodes."),
                  }),
          section("busy_poll", "Busy polling for data (P2, seed 001).",
                  {
                      integer("budget_us", {0, 100'000}, 50, "How long a fiber may busy-poll; 0 = off."),
                      boolean("yield_when_runnable", true, "Stop polling when another fiber is runnable."),
                  }),
          section("nic", "The NIC: RX queues, where they are polled, RPS (P3, seed 003), and the wire.",
                  {
                      integer("node", {0, 1023}, 0, "NUMA node of the NIC."),
                      integer("queues", {1, 4096}, 1, "RX queues; flows are spread over them by RSS hash."),
                      enumeration("placement", {"local", "spread"}, "local",
                                  "Which cores own the queues (reactor.rxq_placement)."),
                      enumeration("rps", {"off", "hash", "flow", "idle"}, "off", "RPS mode of every RX queue."),
                      integer("rps_idle_max_rx_share_pct", {0, 100}, 50,
                              "rps = idle: a core busier than this with packets is not idle (seed 003)."),
                      integer("ring_size", {1, 1 << 20}, 1024, "Descriptors per RX queue."),
                      integer("one_way_ns", ns_range, 5000, "Client to NIC latency each way, serialization excluded."),
                      integer("link_gbps", {1, 1000}, 10, "Link speed, for serialization."),
                  }),
          section("costs", "What the simulated work costs, in ns (docs/simulator.md: calibration).", cost_keys()),
          section("clients", "The load: clients, flows, requests.", std::move(clients)),
          section("server", "The fibers that serve the flows.", std::move(server)),
          section("antagonists", "CPU hogs (stress -c N) that share the cores.",
                  {
                      integer("count", {0, 100'000}, 0, "How many."),
                      cores("cores", core_list{}, "Their cpuset (taskset -c); they start round robin over it."),
                      integer("slice_us", {1, us_range.max}, 3000,
                              "How long a hog runs before waiting tasks get the core (the kernel's 3 ms "
                              "granularity: 0.75 ms x (1 + log2 8))."),
                  }),
          array_of_tables("variant", "One measured setting; each prints one JSON line.",
                          {
                              string("name", required, "The setting's name: \"variant\" in the JSON lines."),
                              integer("x", {-1, 1'000'000'000}, -1, "The swept parameter's value (-1: none)."),
                              string_array("set", {}, "Overrides, PATH=VALUE as with --set."),
                              string("baseline", "", "The variant with the same x this one's effect is measured against."),
                              string("seed", "", "The seed's figure for this variant, in the metric's unit.",
                                     &decimal_or_none),
                              string("seed_note", "", "What the seed says, when it gives no number."),
                              string("costs_from", "",
                                     "A calibration file (sim/calibration/*.toml, relative to the scenario) whose "
                                     "[costs] this variant uses, before its own set."),
                          }),
      });
}

}  // namespace

const config::schema& scenario_schema() {
  static const config::schema s = make_schema();
  return s;
}

const config::schema& calibration_schema() {
  static const config::schema s(
      "affine-sim calibration", {},
      {
          section("calibration", "Where the figures come from.",
                  {
                      string("command", required, "The command that wrote this file."),
                      string("date", "", "When it ran."),
                      string("machine", "", "Where it ran."),
                      string_array("measured", {}, "The benchmark JSON lines the costs were derived from."),
                  }),
          section("costs", "The costs, in ns, as in a scenario's [costs].", cost_keys()),
      });
  return s;
}

std::vector<std::string_view> cost_key_names() {
  std::vector<std::string_view> names;
  for (const config::key_spec& k : cost_keys()) names.push_back(k.name);
  return names;
}

}  // namespace affine::sim
