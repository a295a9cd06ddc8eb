#pragma once
// The [[port]] tables of the configuration with driver = "dpdk", opened:
// the EAL from their `eal` lists, each port with its queues, MTU, pool and
// RSS mode. Every error names the file, line and key to change, and is
// meant to end start-up with a non-zero exit (issue 4, "bad input").

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "affine/config.hh"
#include "drivers/dpdk/port.hh"

namespace affine::drivers::dpdk {

// The EAL arguments of every dpdk [[port]] in file order (the EAL is one per
// process, so their lists are joined).
std::vector<std::string> eal_args_from_config(const config::settings& cfg);

// Every dpdk [[port]] names a device (a `pci` address or a --vdev in `eal`).
std::expected<void, std::string> check_devices_named(const config::settings& cfg);

// check_devices_named, then init_eal with those arguments; a failure is
// reported at the first port's `eal` key.
std::expected<void, std::string> init_eal_from_config(const config::settings& cfg);

// Opens one [[port]] table (driver = "dpdk") with one TX queue per reactor.
// Precondition: the EAL is initialised.
std::expected<std::unique_ptr<dpdk_port>, std::string> open_port_from_config(const config::table_view& port,
                                                                             unsigned reactors);

}  // namespace affine::drivers::dpdk
