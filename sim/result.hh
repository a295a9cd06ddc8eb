#pragma once
// What one simulated run measured: throughput, latency, per-node utilization
// (average and over time) and how often each policy decision fired.

#include <array>
#include <cstdint>
#include <vector>

#include "affine/topology.hh"
#include "reactor/policy/busy_poll.hh"
#include "reactor/policy/place.hh"
#include "reactor/policy/rps.hh"
#include "sim/histogram.hh"

namespace affine::sim {

struct counters {
  std::array<std::uint64_t, policy::wake_reason_count> wake_reasons{};
  std::uint64_t wake_idle_sibling = 0;
  std::array<std::uint64_t, policy::rps_reason_count> rps_reasons{};
  std::array<std::uint64_t, 4> rps_distance{};  // handoffs by affine::distance
  std::array<std::uint64_t, policy::poll_exit_count> poll_exits{};
  std::array<std::uint64_t, 3> steals{};        // by domain_level
  std::uint64_t migrations = 0;                 // a task ran on another core than last time
  std::uint64_t remote_migrations = 0;          // ... on another NUMA node
  std::uint64_t idle_kicks = 0;
  std::uint64_t preemptions = 0;                // kernel.cfs: ticks and wakeups that set need_resched
  std::uint64_t drops = 0;                      // RX ring or socket buffer full
  std::uint64_t events = 0;                     // events the loop handled (all of the run)
};

struct result {
  double measured_s = 0;
  double transactions_per_s = 0;
  double requests_per_s = 0;
  histogram latency;                 // per request, as the workload reports it (round trip or half)
  std::vector<double> node_busy_pct;  // per node, over the measured time
  // Per node, one value per sample interval from time 0 (warmup included).
  std::vector<std::vector<double>> node_busy_series;
  double sample_ms = 0;
  counters count;                    // over the measured time (events: whole run)
};

}  // namespace affine::sim
