// rte_devargs_reset is experimental in 22.11 (stable from 23.11).
#define ALLOW_EXPERIMENTAL_API 1

#include "drivers/dpdk/probe.hh"

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>

#include <optional>

#include <fmt/format.h>

#include "drivers/dpdk/error.hh"

namespace affine::drivers::dpdk {

namespace {

// "03:00.0" as DPDK names it: "0000:03:00.0".
std::string canonical_name(std::string_view name) {
  const bool short_pci = name.size() == 7 && name[2] == ':' && name[5] == '.';
  return short_pci ? "0000:" + std::string(name) : std::string(name);
}

// The first ethdev port of the device DPDK calls `dev_name`.
std::optional<std::uint16_t> port_of_device(const std::string& dev_name) {
  std::uint16_t p;
  RTE_ETH_FOREACH_DEV(p) {
    rte_eth_dev_info info{};
    if (rte_eth_dev_info_get(p, &info) == 0 && info.device != nullptr && dev_name == rte_dev_name(info.device))
      return p;
  }
  return std::nullopt;
}

}  // namespace

std::expected<std::string, std::string> device_from_config(std::string_view pci, std::span<const std::string> eal) {
  if (!pci.empty()) return std::string(pci);
  for (std::size_t i = 0; i < eal.size(); ++i) {
    const std::string_view a = eal[i];
    if (a.starts_with("--vdev=")) return std::string(a.substr(7));
    if (a == "--vdev" && i + 1 < eal.size()) return eal[i + 1];
  }
  return std::unexpected(std::string(
      "a dpdk port needs a device: set pci (\"0000:03:00.0\") or add a virtual device to eal "
      "(\"--vdev=net_tap0,iface=affine0\")"));
}

std::expected<probed_device, std::string> find_or_plug(std::string_view device) {
  const std::string name = canonical_name(device.substr(0, device.find(',')));
  if (name.empty())
    return std::unexpected(std::string(
        "port: no device given (a port name, a PCI address like 0000:03:00.0, or a vdev like net_ring0)"));
  const std::string spec = name + std::string(device.substr(std::min(device.find(','), device.size())));

  std::uint16_t id;
  if (rte_eth_dev_get_port_by_name(name.c_str(), &id) == 0) return probed_device{id, name, {}, {}};

  log_capture log;
  rte_devargs da{};
  if (rte_devargs_parse(&da, spec.c_str()) != 0) {
    return std::unexpected(fmt::format(
        "port {}: no DPDK driver for '{}': not a PCI address, and no PMD of that name is installed (PMDs load "
        "from {})",
        name, spec, RTE_EAL_PMD_PATH));
  }
  const std::string bus = da.bus != nullptr ? rte_bus_name(da.bus) : "";
  const std::string dev_name = da.name;
  rte_devargs_reset(&da);

  if (const int rc = rte_dev_probe(spec.c_str()); rc != 0) {
    if (bus == "pci")
      return std::unexpected(fmt::format(
          "port {}: {}: DPDK cannot use this PCI device (bound to vfio-pci? a Mellanox NIC with its kernel "
          "driver? --no-pci in eal? see docs/dpdk.md)",
          name, explain(rc)));
    // PMDs fail their probe with -1 and say why in the log.
    std::string why = log.reason();
    if (why.empty()) why = rc == -1 ? "no reason given (check the PMD's arguments, docs/dpdk.md)" : explain(rc);
    return std::unexpected(fmt::format("port {}: the PMD refused '{}': {}", name, spec, why));
  }
  const auto port = port_of_device(dev_name);
  if (!port) return std::unexpected(fmt::format("port {}: the device was probed but has no ethdev port", name));
  char ethdev_name[RTE_ETH_NAME_MAX_LEN];
  rte_eth_dev_get_name_by_port(*port, ethdev_name);
  return probed_device{*port, ethdev_name, bus, dev_name};
}

void unplug(const probed_device& d) {
  if (d.plugged_device.empty()) return;
  log_capture quiet;
  rte_eal_hotplug_remove(d.plugged_bus.c_str(), d.plugged_device.c_str());
}

}  // namespace affine::drivers::dpdk
