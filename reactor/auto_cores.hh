#pragma once
// reactor.cores = "auto": how many reactors, from the topology and from
// what other processes already keep busy (issue 23). One reactor per core
// pays where the cores are the process's own; where a database and its
// clients share two CPUs with it, each extra reactor adds cross-core
// wakeups and sleeps for nothing (bench/run proxy: one reactor at 272 us of
// CPU a transaction, two at 542, docs/tuning.md "Adaptive polling").
//
// The rule: every core this process may use, less one for each CPU that
// other processes kept busy over the last minute (the kernel's 1-minute
// load average, rounded to the nearest whole CPU), never fewer than one;
// the cores kept are the first ones, spread over nodes (first_cores).
// "all" keeps one reactor per core whatever the load.

#include <expected>
#include <string>
#include <vector>

#include "affine/topology.hh"

namespace affine::detail {

// The rule above, for a given load of other processes. Pure.
std::expected<std::vector<core_id>, std::string> auto_cores(const topology& topo, double others_load);

// The 1-minute load average (/proc/loadavg), the runnable and
// uninterruptible tasks of the whole machine averaged over a minute; read
// before this process starts its threads, it is other processes' load. 0
// when it cannot be read.
double load_average_1m();

}  // namespace affine::detail
