#pragma once
// A miniature machine for policy tests: a topology plus the per-core state a
// reactor or the simulator would hand the policies, with setters that keep
// nr_running, load and idle consistent.

#include <cstdint>
#include <utility>
#include <vector>

#include "affine/topology.hh"
#include "reactor/policy/view.hh"

namespace affine::policy::testing {

inline core_id cpu(std::uint32_t v) { return core_id{v}; }

// nodes x llcs_per_node x cores_per_llc, one package per node; core ids run
// LLC by LLC, node by node.
inline topology grid(unsigned nodes, unsigned llcs_per_node, unsigned cores_per_llc) {
  std::vector<core_info> cores;
  for (unsigned n = 0; n < nodes; ++n) {
    for (unsigned l = 0; l < llcs_per_node; ++l) {
      for (unsigned c = 0; c < cores_per_llc; ++c) {
        const auto id = static_cast<std::uint32_t>(cores.size());
        cores.push_back({.id = core_id{id}, .os_cpu = id, .llc = n * llcs_per_node + l, .node = n, .package = n});
      }
    }
  }
  return topology::from_cores(std::move(cores), nodes);
}

struct machine {
  topology topo;
  std::vector<core_state> cores;
  std::vector<core_id> reactors;

  // Every core runs an idle reactor.
  explicit machine(topology t) : topo(std::move(t)), cores(topo.core_count()) {
    for (const core_id c : topo.all_cores()) {
      reactors.push_back(c);
      cores[c.value].idle = true;
    }
  }

  sched_view view() const { return {topo, cores, reactors}; }

  // `nr` fibers runnable on c, each busy all the time.
  void run(core_id c, std::uint32_t nr) {
    core_state& s = cores[c.value];
    s.nr_running = nr;
    s.load = nr * load_scale;
    s.idle = nr == 0;
  }
  void run_all(std::uint32_t first, std::uint32_t last, std::uint32_t nr) {
    for (std::uint32_t c = first; c <= last; ++c) run(cpu(c), nr);
  }
  // One more runnable fiber on c: what a placement does to the machine.
  void add(core_id c) { run(c, cores[c.value].nr_running + 1); }
  // Take c out of the reactor set: the zero state, "no reactor here".
  void drop_reactor(core_id c) {
    cores[c.value] = core_state{};
    std::erase(reactors, c);
  }
};

}  // namespace affine::policy::testing
