// Loading a topology through hwloc: the real machine, a synthetic description
// or an XML export. hwloc objects never leave this file; what the rest of
// affine sees is the flat core list of topology::from_cores.

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <hwloc.h>

#include "affine/topology.hh"

namespace affine {

namespace {

struct topology_deleter {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
using hwloc_handle = std::unique_ptr<hwloc_topology, topology_deleter>;

std::expected<hwloc_handle, std::string> new_topology() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    return std::unexpected(fmt::format("hwloc_topology_init failed: {}", std::strerror(errno)));
  }
  return hwloc_handle(raw);
}

// Gives each distinct object a dense index in the order cores first meet it,
// so indexes are 0..n-1 even where hwloc's own numbering has holes.
class dense_index {
 public:
  unsigned of(hwloc_obj_t obj) {
    return ids_.try_emplace(obj, static_cast<unsigned>(ids_.size())).first->second;
  }
  std::optional<unsigned> find(hwloc_obj_t obj) const {
    const auto it = ids_.find(obj);
    return it == ids_.end() ? std::nullopt : std::optional<unsigned>(it->second);
  }

 private:
  std::map<hwloc_obj_t, unsigned> ids_;
};

// The type whose objects are the LLC domains: L3, else L2, else the package.
hwloc_obj_type_t llc_type(hwloc_topology_t t) {
  if (hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_L3CACHE) > 0) return HWLOC_OBJ_L3CACHE;
  if (hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_L2CACHE) > 0) return HWLOC_OBJ_L2CACHE;
  return HWLOC_OBJ_PACKAGE;
}

// The object standing for `obj` at `type`: its ancestor of that type, else its
// package, else the whole machine (objects outside every package exist only
// on odd machines; they then share one domain rather than getting none).
hwloc_obj_t ancestor_or_root(hwloc_topology_t t, hwloc_obj_type_t type, hwloc_obj_t obj) {
  if (hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(t, type, obj)) return a;
  if (hwloc_obj_t p = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, obj)) return p;
  return hwloc_get_root_obj(t);
}

// hwloc 2 hangs NUMA nodes off the tree as memory children, so a core's node
// is found by cpuset: the first node (logical order) that covers it. Nodes
// without cores (memory-only, e.g. CXL or HBM) never match a core's cpuset.
hwloc_obj_t node_covering(hwloc_topology_t t, hwloc_const_cpuset_t cpuset) {
  for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n));) {
    if (n->cpuset && !hwloc_bitmap_iszero(n->cpuset) && hwloc_bitmap_isincluded(cpuset, n->cpuset)) {
      return n;
    }
  }
  return nullptr;
}

std::expected<topology, std::string> to_topology(hwloc_topology_t t) {
  // Some platforms report no Core objects; each PU is then a core.
  const hwloc_obj_type_t core_type =
      hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  const hwloc_obj_type_t llc = llc_type(t);
  dense_index llcs, nodes, packages;

  std::vector<core_info> cores;
  for (hwloc_obj_t c = nullptr; (c = hwloc_get_next_obj_by_type(t, core_type, c));) {
    // Cpuset bits are OS cpu numbers, so the lowest is the first PU's.
    const int first_pu = hwloc_bitmap_first(c->cpuset);
    if (first_pu < 0) continue;  // a core with every PU disallowed
    // hwloc always has a node covering every allowed PU; 0 is only a guard.
    hwloc_obj_t node = node_covering(t, c->cpuset);
    core_info info;
    info.os_cpu = static_cast<unsigned>(first_pu);
    info.llc = llcs.of(ancestor_or_root(t, llc, c));
    info.node = node ? nodes.of(node) : 0;
    info.package = packages.of(ancestor_or_root(t, HWLOC_OBJ_PACKAGE, c));
    cores.push_back(info);
  }
  if (cores.empty()) return std::unexpected("hwloc found no usable cores");

  std::vector<std::pair<std::string, unsigned>> pci_nodes;
  for (hwloc_obj_t d = nullptr; (d = hwloc_get_next_pcidev(t, d));) {
    // The nearest non-I/O ancestor is what the device is local to. When it is
    // wider than one node (no locality known), no node covers it: unknown.
    // So is a node none of our cores is on.
    hwloc_obj_t parent = hwloc_get_non_io_ancestor_obj(t, d);
    hwloc_obj_t node = parent ? node_covering(t, parent->cpuset) : nullptr;
    if (const auto index = node ? nodes.find(node) : std::nullopt) {
      const auto& pci = d->attr->pcidev;
      pci_nodes.emplace_back(
          fmt::format("{:04x}:{:02x}:{:02x}.{:x}", pci.domain, pci.bus, pci.dev, pci.func), *index);
    }
  }
  // The package count follows from the cores' dense package indexes.
  return topology::from_cores(std::move(cores), 0, std::move(pci_nodes));
}

// hwloc builds a synthetic topology in time that grows with the square of
// its size and fan-out (16,384 PUs take seconds to a minute), so oversized
// descriptions are refused before loading. Test machines need far fewer;
// real machines come from from_system, which has no such limit.
constexpr unsigned long long max_synthetic_pus = 4096;

// The PUs a synthetic description asks for: the product of its arities
// ("pack:4", or a bare "4"). Attributes in parentheses and memory
// attachments in brackets carry no arity; tokens hwloc would reject anyway
// are left for hwloc to reject. Saturates at max_synthetic_pus + 1.
unsigned long long synthetic_pu_estimate(std::string_view desc) {
  constexpr unsigned long long too_many = max_synthetic_pus + 1;
  unsigned long long pus = 1;
  int nesting = 0;
  std::string token;
  const auto take = [&] {
    const auto colon = token.rfind(':');
    const std::string_view arity = colon == std::string::npos ? std::string_view(token)
                                                              : std::string_view(token).substr(colon + 1);
    unsigned long long n = 0;
    const auto [end, ec] = std::from_chars(arity.data(), arity.data() + arity.size(), n);
    if (!arity.empty() && end == arity.data() + arity.size()) {
      if (ec == std::errc::result_out_of_range) n = too_many;
      pus = std::min(pus * std::min(n, too_many), too_many);
    }
    token.clear();
  };
  for (char ch : desc) {
    if (ch == '(' || ch == '[') ++nesting;
    else if (ch == ')' || ch == ']') --nesting;
    else if (nesting == 0 && (ch == ' ' || ch == '\t')) take();
    else if (nesting == 0) token += ch;
  }
  take();
  return pus;
}

}  // namespace

std::expected<topology, std::string> topology::from_system() {
  auto t = new_topology();
  if (!t) return std::unexpected(t.error());
  hwloc_topology_set_io_types_filter(t->get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(t->get()) != 0) {
    return std::unexpected(fmt::format("cannot read this machine's topology: {}", std::strerror(errno)));
  }
  return to_topology(t->get());
}

std::expected<topology, std::string> topology::from_synthetic(std::string_view desc) {
  const std::string text(desc);
  if (synthetic_pu_estimate(text) > max_synthetic_pus) {
    return std::unexpected(
        fmt::format("synthetic topology \"{}\" is too large: more than {} PUs", text, max_synthetic_pus));
  }
  auto t = new_topology();
  if (!t) return std::unexpected(t.error());
  if (hwloc_topology_set_synthetic(t->get(), text.c_str()) != 0 || hwloc_topology_load(t->get()) != 0) {
    return std::unexpected(fmt::format("bad synthetic topology \"{}\": hwloc cannot parse it "
                                       "(expected e.g. \"pack:4 numa:1 l3:8 core:4 pu:1\")",
                                       text));
  }
  return to_topology(t->get());
}

std::expected<topology, std::string> topology::from_xml(const std::string& path) {
  auto t = new_topology();
  if (!t) return std::unexpected(t.error());
  hwloc_topology_set_io_types_filter(t->get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_set_xml(t->get(), path.c_str()) != 0 || hwloc_topology_load(t->get()) != 0) {
    return std::unexpected(fmt::format("cannot load hwloc XML \"{}\": {}", path, std::strerror(errno)));
  }
  return to_topology(t->get());
}

}  // namespace affine
