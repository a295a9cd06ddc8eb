// Which core polls which RX queue of a port, and which cores a count of
// reactors means. Both walk the NUMA nodes in one order, starting at the
// port's node, so "near the NIC" means the same thing everywhere.

#include <algorithm>

#include <fmt/format.h>

#include "affine/topology.hh"
#include "numa/describe.hh"

namespace affine {

std::string_view to_string(rxq_placement p) {
  switch (p) {
    case rxq_placement::local: return "local";
    case rxq_placement::spread: return "spread";
  }
  return "unknown";
}

namespace {

using numa_detail::id_range;
using node_groups = std::vector<std::vector<core_id>>;

unsigned package_of_node(const topology& topo, unsigned node) {
  const auto cores = topo.cores_in_node(node);
  return cores.empty() ? 0 : topo.core(cores.front()).package;
}

// Nodes nearest first as seen from `from`: itself, then the other nodes of its
// package, then the other packages. The topology keeps no node distance
// matrix, so the package is the distance; ties go round the node numbers
// starting after `from`, which keeps the order deterministic and spreads
// neighbouring ports over different nodes.
std::vector<unsigned> nodes_nearest_first(const topology& topo, unsigned from) {
  const auto n = static_cast<unsigned>(topo.node_count());
  const unsigned home = package_of_node(topo, from);
  std::vector<unsigned> order;
  for (unsigned i = 0; i < n; ++i) order.push_back((from + i) % n);
  std::stable_sort(order.begin() + 1, order.end(), [&](unsigned a, unsigned b) {
    return (package_of_node(topo, a) != home) < (package_of_node(topo, b) != home);
  });
  return order;
}

// The cores to use, in the order queues take them: node by node (local) or
// one core of each node in turn (spread). Inside a node, ascending core id.
std::vector<core_id> core_sequence(const node_groups& by_node, const std::vector<unsigned>& order,
                                   rxq_placement mode) {
  std::vector<core_id> seq;
  if (mode == rxq_placement::local) {
    for (unsigned node : order) seq.insert(seq.end(), by_node[node].begin(), by_node[node].end());
    return seq;
  }
  for (std::size_t round = 0;; ++round) {
    const std::size_t before = seq.size();
    for (unsigned node : order) {
      if (round < by_node[node].size()) seq.push_back(by_node[node][round]);
    }
    if (seq.size() == before) return seq;
  }
}

}  // namespace

std::expected<std::vector<rxq_assignment>, std::string> plan_rx_queues(
    const topology& topo, unsigned port_node, unsigned queues,
    std::span<const core_id> reactor_cores, rxq_placement mode) {
  if (queues == 0) return std::unexpected("a port needs at least 1 RX queue");
  if (reactor_cores.empty()) return std::unexpected("no reactor cores to place RX queues on");
  if (port_node >= topo.node_count()) {
    return std::unexpected(fmt::format("NUMA node {} does not exist: this machine has {}", port_node,
                                       id_range("node", topo.node_count())));
  }
  node_groups by_node(topo.node_count());
  for (core_id c : reactor_cores) {
    if (c.value >= topo.core_count()) {
      return std::unexpected(fmt::format("core {} does not exist: this machine has {}", c.value,
                                         id_range("core", topo.core_count())));
    }
    by_node[topo.core(c).node].push_back(c);
  }
  for (auto& cores : by_node) {
    std::sort(cores.begin(), cores.end());
    if (auto dup = std::adjacent_find(cores.begin(), cores.end()); dup != cores.end()) {
      return std::unexpected(fmt::format("core {} is listed twice", dup->value));
    }
  }
  const auto seq = core_sequence(by_node, nodes_nearest_first(topo, port_node), mode);
  std::vector<rxq_assignment> plan;
  plan.reserve(queues);
  for (unsigned q = 0; q < queues; ++q) plan.push_back({q, seq[q % seq.size()]});
  return plan;
}

std::expected<std::vector<core_id>, std::string> first_cores(const topology& topo, unsigned count) {
  if (count == 0) return std::unexpected("a core count must be at least 1");
  if (count > topo.core_count()) {
    return std::unexpected(fmt::format("{} cores requested: this machine has only {}", count,
                                       topo.core_count()));
  }
  node_groups by_node(topo.node_count());
  for (unsigned n = 0; n < topo.node_count(); ++n) {
    const auto cores = topo.cores_in_node(n);
    by_node[n].assign(cores.begin(), cores.end());
  }
  auto seq = core_sequence(by_node, nodes_nearest_first(topo, 0), rxq_placement::spread);
  seq.resize(count);
  std::sort(seq.begin(), seq.end());
  return seq;
}

}  // namespace affine
