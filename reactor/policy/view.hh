#pragma once
// The read-only picture of the scheduler that every policy decides from.
//
// One layout serves the three callers: the live reactor copies its per-core
// atomics (read relaxed) into a scratch array of core_state once per loop turn,
// the simulator keeps a plain array, and tests write the array by hand. The
// policies never write through the view and keep nothing between calls, so the
// same input gives the same decision wherever it is asked.
//
// A snapshot may be a little stale; the kernel reads nr_running and load of
// other CPUs racily too, and every decision here tolerates that.

#include <cstdint>
#include <span>

#include "affine/topology.hh"

namespace affine::policy {

// Loads are fixed point: load_scale is one fiber runnable all the time.
inline constexpr std::uint32_t load_scale = 1024;

// One core as the policies see it. The zero value means "no reactor here":
// not idle and nothing runnable, so no policy ever places work on it or steals
// from it. Cores outside reactor.cores are therefore simply left zero.
struct core_state {
  std::uint32_t nr_running = 0;  // runnable fibers on this core, the running one included
  std::uint32_t load = 0;        // decayed average of nr_running, x load_scale
  std::uint32_t rx_share = 0;    // decayed share of time spent in the RX path, x load_scale
                                 // (0 where the caller does not track it)
  bool idle = false;             // a reactor with nothing runnable that is not processing packets
};

struct sched_view {
  const topology& topo;
  // Indexed by core_id::value; exactly topo.core_count() entries.
  std::span<const core_state> cores;
  // The cores that run a reactor, ascending: the candidates of RPS's hash map.
  // Must not be empty.
  std::span<const core_id> reactor_cores;

  const core_state& at(core_id c) const { return cores[c.value]; }
  std::uint32_t nr_running(core_id c) const { return at(c).nr_running; }
  bool idle(core_id c) const { return at(c).idle; }
};

// Whether the view keeps its own contract (sizes agree, reactor_cores is
// non-empty, ascending and inside the topology). For asserts and tests; the
// policies assume it and do not check on every call.
bool well_formed(const sched_view& view);

}  // namespace affine::policy
