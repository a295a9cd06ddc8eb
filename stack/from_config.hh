#pragma once
// A [[port]] table with driver = "dpdk" as the stack's configuration: its
// address, gateway, MTU and per-RX-queue settings, and [tcp]'s connection
// defaults (the composition root, runtime/stack_ports.cc, starts a stack on
// each port with it).

#include <expected>
#include <string>

#include "affine/config.hh"
#include "stack/stack.hh"

namespace affine::stack {

// The table's ip/gateway as a stack_config, with the file's [tcp] defaults
// (root: the whole file); errors name file, line and key.
std::expected<stack_config, std::string> stack_config_from(const config::table_view& root,
                                                          const config::table_view& port);

}  // namespace affine::stack
