#include "apps/affine-topo/from_config.hh"

#include <fmt/format.h>

#include "affine/config.hh"

namespace affine_topo {

namespace {

using affine::config::core_list;

std::expected<affine::config::settings, std::string> load_settings(const options& o) {
  auto s = o.config_path.empty() ? std::expected<affine::config::settings, std::string>(
                                       affine::config::defaults(affine::config_schema()))
                                 : affine::config::load_file(affine::config_schema(), o.config_path);
  if (!s) return s;
  if (auto ok = affine::config::apply_sets(*s, o.sets); !ok) return std::unexpected(ok.error());
  return s;
}

std::expected<std::vector<affine::core_id>, std::string> cores_from(const affine::config::settings& cfg,
                                                                    const affine::topology& topo) {
  const core_list& cl = cfg.get_cores("reactor.cores");
  auto cores = cl.what == core_list::kind::count ? affine::first_cores(topo, unsigned(cl.count))
               : cl.what == core_list::kind::list ? affine::parse_core_list(topo, cl.list)
                                                   : affine::parse_core_list(topo, "auto");
  if (!cores) return std::unexpected(cfg.error("reactor.cores", cores.error()));
  return cores;
}

// The first [[port]]'s node: numa_node if given, else what hwloc knows of
// its PCI address, else node 0 (virtual devices have no locality).
unsigned port_node(const affine::config::table_view& port, const affine::topology& topo) {
  if (const std::int64_t n = port.get_int("numa_node"); n >= 0) return unsigned(n);
  if (const std::string& pci = port.get_string("pci"); !pci.empty())
    if (auto n = topo.pci_node(pci)) return *n;
  return 0;
}

}  // namespace

std::expected<plan_input, std::string> resolve(const options& o, const affine::topology& topo) {
  auto cfg = load_settings(o);
  if (!cfg) return std::unexpected(cfg.error());
  plan_input in;

  if (o.cores) {
    auto cores = affine::parse_core_list(topo, *o.cores);
    if (!cores) return std::unexpected(fmt::format("--cores: {}", cores.error()));
    in.cores = std::move(*cores);
  } else {
    auto cores = cores_from(*cfg, topo);
    if (!cores) return std::unexpected(cores.error());
    in.cores = std::move(*cores);
  }

  const auto ports = cfg->tables("port");
  in.placement = o.placement.value_or(cfg->get_string("reactor.rxq_placement") == "spread"
                                          ? affine::rxq_placement::spread
                                          : affine::rxq_placement::local);
  // No port, or queues = "auto": one per reactor, up to a typical NIC's
  // count (the device's own limit is known only when it is opened).
  const auto asked = ports.empty() ? std::nullopt : ports[0].get_count("queues");
  in.queues = o.queues.value_or(asked ? unsigned(*asked)
                                      : std::min<unsigned>(unsigned(in.cores.size()), default_queue_cap));
  in.nic_node = o.nic_node.value_or(ports.empty() ? 0 : port_node(ports[0], topo));
  if (in.nic_node >= topo.node_count() && !o.nic_node && !ports.empty())
    return std::unexpected(ports[0].error("numa_node", fmt::format("node {} does not exist: this machine has {}",
                                                                   in.nic_node, topo.summary())));
  return in;
}

}  // namespace affine_topo
