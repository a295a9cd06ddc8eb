#pragma once
// A stack on each [[port]] with driver = "dpdk": its address, gateway and
// MTU from the table, its RX queues planned over the reactor cores
// (reactor.rxq_placement), attached to a running runtime.

#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "affine/config.hh"
#include "affine/runtime.hh"
#include "drivers/dpdk/port.hh"
#include "stack/stack.hh"

namespace affine::stack {

// The table's ip/gateway as a stack_config; errors name file, line and key.
std::expected<stack_config, std::string> stack_config_from(const config::table_view& port);

// One stack per opened port, in order (ports[i] from the i-th dpdk table).
// Precondition: in a fiber of `rt`.
std::expected<std::vector<std::unique_ptr<stack>>, std::string> start_stacks(
    runtime& rt, const config::settings& cfg, std::span<const std::unique_ptr<drivers::dpdk::dpdk_port>> ports);

}  // namespace affine::stack
