#pragma once
// The machine as the scheduler sees it: cores, LLC domains, NUMA nodes,
// packages, distances and scheduling-domain levels, from hwloc (the real
// machine, a synthetic description, or an XML export).
//
// A "core" here is one hwloc Core object; affine runs one reactor per core and
// uses the core's first PU (SMT siblings are left to the OS). Cores are
// numbered 0..N-1 in hwloc's logical order, so core ids of a synthetic
// topology are stable and testable; `os_cpu` is what pinning uses.

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace affine {

// Strong id of a core inside a topology (0..cores()-1). Not an OS cpu number.
struct core_id {
  std::uint32_t value = 0;
  friend constexpr auto operator<=>(core_id, core_id) = default;
};

// How far apart two cores are, nearest first. The order is meaningful:
// policies compare distances with < and >.
enum class distance : std::uint8_t { same_core, same_llc, same_node, remote_node };
std::string_view to_string(distance d);

// Scheduling-domain levels, walked outward by the balancer (like the kernel's
// MC -> NUMA -> machine domains).
enum class domain_level : std::uint8_t { llc, node, machine };
std::string_view to_string(domain_level l);

struct core_info {
  core_id id;
  unsigned os_cpu = 0;   // OS index of the core's first PU: what pinning uses
  unsigned llc = 0;      // LLC domain index, 0..llc_count()-1
  unsigned node = 0;     // NUMA node index, 0..node_count()-1
  unsigned package = 0;  // package (socket) index
};

// One scheduling domain of one core: the set of cores at that level that
// contains it (the core itself included), in core-id order.
struct sched_domain {
  domain_level level;
  std::span<const core_id> span;
};

class topology {
 public:
  // The machine this process runs on.
  static std::expected<topology, std::string> from_system();
  // hwloc synthetic description, e.g. "pack:4 numa:1 l3:8 core:4 pu:1".
  static std::expected<topology, std::string> from_synthetic(std::string_view desc);
  // An hwloc XML export (lstopo --of xml).
  static std::expected<topology, std::string> from_xml(const std::string& path);

  std::size_t core_count() const { return cores_.size(); }
  std::size_t llc_count() const { return llc_cores_.size(); }
  std::size_t node_count() const { return node_cores_.size(); }
  std::size_t package_count() const { return package_count_; }

  const core_info& core(core_id c) const { return cores_[c.value]; }
  std::span<const core_info> cores() const { return cores_; }
  std::span<const core_id> cores_in_llc(unsigned llc) const { return llc_cores_[llc]; }
  std::span<const core_id> cores_in_node(unsigned node) const { return node_cores_[node]; }
  std::span<const core_id> all_cores() const { return all_; }
  // The core whose os_cpu is `cpu`, if any.
  std::optional<core_id> core_of_os_cpu(unsigned cpu) const;

  distance dist(core_id a, core_id b) const;
  bool share_llc(core_id a, core_id b) const { return core(a).llc == core(b).llc; }
  bool same_node(core_id a, core_id b) const { return core(a).node == core(b).node; }

  // The core's domains, innermost first: llc, node, machine. A level whose
  // span equals the previous level's is still listed (callers may rely on the
  // three entries), so a 1-node machine has node == machine.
  std::vector<sched_domain> domains(core_id c) const;

  // NUMA node of a PCI device ("0000:03:00.0"; case and a missing "0000:"
  // domain do not matter), if hwloc knows it. On
  // machines without locality information (VMs, virtual devices) this is
  // nullopt and callers choose node 0.
  std::optional<unsigned> pci_node(std::string_view pci_address) const;

  // Human-readable one-line summary: "128 cores, 4 nodes, 32 LLC domains, 4 packages".
  std::string summary() const;

  // Build a topology directly (used by the hwloc loader and by tests). Core
  // ids are the positions in `cores` (any id given is overwritten); the node,
  // LLC and package counts are the largest index + 1 (the package count at
  // least `packages`). PCI addresses may omit the domain ("03:00.0").
  static topology from_cores(std::vector<core_info> cores, std::size_t packages,
                             std::vector<std::pair<std::string, unsigned>> pci_nodes = {});

 private:
  std::vector<core_info> cores_;
  std::vector<core_id> all_;
  std::vector<std::vector<core_id>> llc_cores_;
  std::vector<std::vector<core_id>> node_cores_;
  std::size_t package_count_ = 0;
  std::vector<std::pair<std::string, unsigned>> pci_nodes_;  // bus address -> node
};

// ---- RX-queue plan --------------------------------------------------------

enum class rxq_placement : std::uint8_t {
  local,   // the port's node first, then the next nodes by distance, round-robin inside each
  spread,  // round-robin over nodes, starting at the port's node
};
// Node order for both: the port's node, then the other nodes of its package,
// then the remaining packages; ties go round the node numbers starting after
// the port's node. Inside a node, cores are taken in ascending id order.
// Example, 2 nodes x 4 cores (node 0 = cores 0-3), NIC on node 1, 4 queues:
// local gives cores 4 5 6 7, spread gives 4 0 5 1.
std::string_view to_string(rxq_placement p);

struct rxq_assignment {
  unsigned queue = 0;
  core_id core;
};

// Assign each of `queues` RX queues of a port on NUMA node `port_node` to one
// of `reactor_cores` (a subset of the topology's cores, e.g. from
// reactor.cores). Deterministic. With more queues than cores, cores are reused
// in the same order. Errors (no queues, no cores, node out of range, a core
// not in the topology, a core listed twice) come back as a one-line message.
std::expected<std::vector<rxq_assignment>, std::string> plan_rx_queues(
    const topology& topo, unsigned port_node, unsigned queues,
    std::span<const core_id> reactor_cores, rxq_placement mode);

// Parse a core list as written in config ("all", "0-7", "0,2,4-6") against
// a topology: the ids are topology core ids, "all" (or "auto", which the
// runtime's reactor.cores resolves by load first) means every core. (A
// count, `cores = 4` as a TOML integer, is `first_cores`.) Cores come back in
// the order written. Errors name what is wrong and the valid range ("core 9
// does not exist: this machine has cores 0-7"): empty list or entry, garbage,
// reversed range ("7-3"), a core listed twice.
std::expected<std::vector<core_id>, std::string> parse_core_list(const topology& topo,
                                                                 std::string_view text);
// The inverse of parse_core_list: ids in the given order, runs of consecutive
// ids shortened to ranges ("0-3,8,10-11"); empty for no cores.
std::string format_core_list(std::span<const core_id> cores);
// The first `count` cores, spread over nodes as the RX plan would (so 4 cores
// on a 2-node machine are 2 + 2), starting at node 0, in ascending id order.
// Error if count is 0 or exceeds core_count().
std::expected<std::vector<core_id>, std::string> first_cores(const topology& topo,
                                                             unsigned count);

}  // namespace affine
