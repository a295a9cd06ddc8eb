// The topology value itself: indexes built once from a flat core list, and the
// queries the scheduler asks on every decision (distance, domains).

#include "affine/topology.hh"

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/format.h>

namespace affine {

std::string_view to_string(distance d) {
  switch (d) {
    case distance::same_core: return "same_core";
    case distance::same_llc: return "same_llc";
    case distance::same_node: return "same_node";
    case distance::remote_node: return "remote_node";
  }
  return "unknown";
}

std::string_view to_string(domain_level l) {
  switch (l) {
    case domain_level::llc: return "llc";
    case domain_level::node: return "node";
    case domain_level::machine: return "machine";
  }
  return "unknown";
}

namespace {

// PCI addresses are compared in one spelling: lower-case hex with the domain
// ("0000:03:00.0"), so "03:00.0" and "0000:03:00.0" name the same device.
std::string canonical_pci_address(std::string_view address) {
  std::string out;
  if (std::count(address.begin(), address.end(), ':') == 1) out = "0000:";
  for (char ch : address) out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// Cores grouped by one of their indexes (llc or node); ids ascend inside a group.
template <typename Key>
std::vector<std::vector<core_id>> group_by(const std::vector<core_info>& cores, Key key) {
  std::vector<std::vector<core_id>> groups;
  for (const core_info& c : cores) {
    const unsigned k = key(c);
    if (k >= groups.size()) groups.resize(k + 1);
    groups[k].push_back(c.id);
  }
  return groups;
}

}  // namespace

topology topology::from_cores(std::vector<core_info> cores, std::size_t packages,
                              std::vector<std::pair<std::string, unsigned>> pci_nodes) {
  topology t;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    cores[i].id = core_id{static_cast<std::uint32_t>(i)};
    t.all_.push_back(cores[i].id);
    packages = std::max<std::size_t>(packages, cores[i].package + 1);
  }
  t.llc_cores_ = group_by(cores, [](const core_info& c) { return c.llc; });
  t.node_cores_ = group_by(cores, [](const core_info& c) { return c.node; });
  t.cores_ = std::move(cores);
  t.package_count_ = packages;
  for (auto& [address, node] : pci_nodes) t.pci_nodes_.emplace_back(canonical_pci_address(address), node);
  return t;
}

std::optional<core_id> topology::core_of_os_cpu(unsigned cpu) const {
  for (const core_info& c : cores_) {
    if (c.os_cpu == cpu) return c.id;
  }
  return std::nullopt;
}

distance topology::dist(core_id a, core_id b) const {
  if (a == b) return distance::same_core;
  // LLC is asked first: where a node is split into several LLCs this is the
  // usual nesting, and where one LLC spans nodes (sub-NUMA clustering) the
  // shared cache is still the nearer thing for a migrating fiber.
  if (share_llc(a, b)) return distance::same_llc;
  if (same_node(a, b)) return distance::same_node;
  return distance::remote_node;
}

std::vector<sched_domain> topology::domains(core_id c) const {
  const core_info& info = core(c);
  return {
      {domain_level::llc, llc_cores_[info.llc]},
      {domain_level::node, node_cores_[info.node]},
      {domain_level::machine, all_},
  };
}

std::optional<unsigned> topology::pci_node(std::string_view pci_address) const {
  const std::string key = canonical_pci_address(pci_address);
  for (const auto& [address, node] : pci_nodes_) {
    if (address == key) return node;
  }
  return std::nullopt;
}

std::string topology::summary() const {
  const auto count = [](std::size_t n, std::string_view one) {
    return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s");
  };
  return fmt::format("{}, {}, {}, {}", count(core_count(), "core"), count(node_count(), "node"),
                     count(llc_count(), "LLC domain"), count(package_count(), "package"));
}

}  // namespace affine
