#pragma once
// A [[port]] table with driver = "dpdk" as the stack's configuration: its
// address, gateway, MTU and per-RX-queue settings, and [tcp]'s connection
// defaults (the composition root, runtime/stack_ports.cc, starts a stack on
// each port with it).

#include <array>
#include <cstdint>
#include <expected>
#include <string>

#include "affine/config.hh"
#include "stack/stack.hh"

namespace affine::stack {

// The table's addresses, gateways, IPv6 link-local settings, MTU and RX
// queues' settings as a stack_config, with the file's [tcp] defaults (root:
// the whole file); errors name file, line and key. `rx_queues`: how many
// the port opened (queues = "auto" is known only then).
std::expected<stack_config, std::string> stack_config_from(const config::table_view& root,
                                                          const config::table_view& port, std::size_t rx_queues);

// RFC 7217's secret_key when stable_secret is "": two SipHash-2-4 outputs
// of /etc/machine-id under fixed keys, so one machine keeps its addresses
// across starts; random (and said so in the log) where the file is missing.
std::array<std::uint8_t, 16> machine_secret();

}  // namespace affine::stack
