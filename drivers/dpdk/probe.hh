#pragma once
// Finding the ethdev a [[port]] names: an existing port (probed by the EAL
// from -a/--vdev arguments), or a device hot-plugged now from a PCI address
// or a vdev string ("net_tap0,iface=affine0").

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>

namespace affine::drivers::dpdk {

struct probed_device {
  std::uint16_t port_id = 0;
  std::string name;        // the ethdev's name ("net_ring0", "0000:03:00.0")
  // Set when the device was hot-plugged here, so it is unplugged at close.
  std::string plugged_bus;
  std::string plugged_device;
};

// The device a [[port]] table names: its `pci` address when set, else the
// first virtual device of its `eal` list ("--vdev=net_tap0,iface=x" or
// "--vdev" "net_tap0,iface=x"), which find_or_plug finds by name once the
// EAL has probed it. Error when the table names neither.
std::expected<std::string, std::string> device_from_config(std::string_view pci, std::span<const std::string> eal);

// Errors, one line each: no device given; no DPDK driver matches (not a PCI
// address, no PMD of that name installed); the PMD refused its arguments or
// the device (with DPDK's reason); a PCI device not usable by DPDK.
std::expected<probed_device, std::string> find_or_plug(std::string_view device);

// After the port is closed: unplug what find_or_plug plugged.
void unplug(const probed_device& d);

}  // namespace affine::drivers::dpdk
