#include "drivers/dpdk/from_config.hh"

#include <rte_ethdev.h>

#include <algorithm>

#include <fmt/format.h>

#include "drivers/dpdk/eal.hh"
#include "drivers/dpdk/probe.hh"

namespace affine::drivers::dpdk {

namespace {

bool is_dpdk(const config::table_view& port) { return port.get_string("driver") == "dpdk"; }

struct queue_counts {
  unsigned rx = 1;
  unsigned tx = 1;
};

// The device a table names, probed (or hot-plugged), and its queues sized
// and checked before open(), so that each error names the key to change:
// RX as `queues` asks, or for "auto" one per reactor as far as the device
// has them (fewer queues than reactors: seed 003's placement shares the
// work out); TX one per reactor, and at least as many as RX (net_tap wants
// as many of each, and a port sized by hand for the machine must still open
// when reactor.cores = "auto" runs fewer reactors than cores). A device
// plugged only for this check is unplugged again: open() plugs it as its
// own, to unplug when the port closes.
std::expected<queue_counts, std::string> size_queues(const config::table_view& port, std::string_view device_key,
                                                     const std::string& device, unsigned reactors) {
  const std::optional<std::int64_t> asked = port.get_count("queues");
  auto dev = find_or_plug(device);
  if (!dev) return std::unexpected(port.error(device_key, dev.error()));
  rte_eth_dev_info info{};
  const bool known = rte_eth_dev_info_get(dev->port_id, &info) == 0;  // if not, open() reports it
  queue_counts q;
  q.rx = asked ? unsigned(*asked) : known ? std::max(1U, std::min(reactors, unsigned(info.max_rx_queues))) : reactors;
  q.tx = std::max(reactors, q.rx);
  std::string error;
  if (known && q.rx > info.max_rx_queues)
    error = port.error("queues", fmt::format("{} RX queues asked for; {} ({}) has at most {}", q.rx, dev->name,
                                             info.driver_name, info.max_rx_queues));
  else if (known && q.tx > info.max_tx_queues)
    error = port.error("queues", fmt::format("{} reactor cores need {} TX queues; {} ({}) has at most {}: run "
                                             "fewer reactors (reactor.cores) or use a device with more queues",
                                             q.tx, q.tx, dev->name, info.driver_name, info.max_tx_queues));
  if (!dev->plugged_device.empty()) unplug(*dev);
  if (!error.empty()) return std::unexpected(error);
  return q;
}

// The key an error about the port's device is reported at: the one that
// names the device, else `driver` (set in the file where `eal` is not).
std::string_view device_key(const config::table_view& port) {
  if (!port.get_string("pci").empty()) return "pci";
  if (port.where("eal") != "(default)" || port.where("driver") == "(default)") return "eal";
  return "driver";
}

}  // namespace

std::expected<void, std::string> check_devices_named(const config::settings& cfg) {
  for (const config::table_view& port : cfg.tables("port"))
    if (is_dpdk(port))
      if (auto d = device_from_config(port.get_string("pci"), port.get_strings("eal")); !d)
        return std::unexpected(port.error(device_key(port), d.error()));
  return {};
}

std::vector<std::string> eal_args_from_config(const config::settings& cfg) {
  std::vector<std::string> args;
  for (const config::table_view& port : cfg.tables("port"))
    if (is_dpdk(port))
      for (const std::string& a : port.get_strings("eal")) args.push_back(a);
  return args;
}

std::expected<void, std::string> init_eal_from_config(const config::settings& cfg) {
  const std::vector<std::string> args = eal_args_from_config(cfg);
  if (auto named = check_devices_named(cfg); !named) return named;
  if (auto r = init_eal(args); !r) {
    for (const config::table_view& port : cfg.tables("port"))
      if (is_dpdk(port)) return std::unexpected(port.error("eal", r.error()));
    return std::unexpected(r.error());
  }
  return {};
}

std::expected<std::unique_ptr<dpdk_port>, std::string> open_port_from_config(const config::table_view& port,
                                                                             unsigned reactors) {
  const std::string_view key = device_key(port);
  auto device = device_from_config(port.get_string("pci"), port.get_strings("eal"));
  if (!device) return std::unexpected(port.error(key, device.error()));

  port_config pc;
  pc.device = *device;
  auto queues = size_queues(port, key, *device, reactors);
  if (!queues) return std::unexpected(queues.error());
  pc.rx_queues = queues->rx;
  pc.tx_queues = queues->tx;
  pc.mtu = std::uint32_t(port.get_int("mtu"));
  pc.mbufs = unsigned(port.get_int("mbufs"));
  pc.rss = *parse_rss_mode(port.get_string("rss"));  // the schema allows only known names
  pc.numa_node = int(port.get_int("numa_node"));
  auto p = dpdk_port::open(pc);
  if (!p) return std::unexpected(port.error(key, p.error()));
  return p;
}

}  // namespace affine::drivers::dpdk
