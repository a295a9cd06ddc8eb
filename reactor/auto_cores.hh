#pragma once
// reactor.cores = "auto": how many reactors, from the topology and from
// what other processes already keep busy (issue 23). One reactor per core
// pays where the cores are the process's own; where a database and its
// clients share two CPUs with it, each extra reactor adds cross-core
// wakeups and sleeps for nothing (bench/run proxy: one reactor at 272 us of
// CPU a transaction, two at 542, docs/tuning.md "Adaptive polling").
//
// The rule: every core this process may use (its CPU affinity: taskset,
// a container's cpuset), less one for each of those CPUs that other
// processes kept busy over the last minute (the kernel's 1-minute load
// average, which covers the whole machine, scaled to the share of its cores
// this process may use, rounded to the nearest whole CPU), never fewer than
// one; the cores kept are the first ones, spread over nodes as first_cores
// spreads them. "all" keeps one reactor per core whatever the load.

#include <expected>
#include <span>
#include <string>
#include <vector>

#include "affine/topology.hh"

namespace affine::detail {

// The rule above, for the cores this process may use (empty: every core)
// and a given load of other processes. Pure; ascending ids.
std::expected<std::vector<core_id>, std::string> auto_cores(const topology& topo, std::span<const core_id> allowed,
                                                            double others_load);

// The cores whose first PU is in the calling thread's CPU affinity
// (sched_getaffinity), ascending; empty when it cannot be read.
std::vector<core_id> allowed_cores(const topology& topo);

// The 1-minute load average (/proc/loadavg), the runnable and
// uninterruptible tasks of the whole machine averaged over a minute; read
// before this process starts its threads, it is other processes' load. 0
// when it cannot be read.
double load_average_1m();

}  // namespace affine::detail
