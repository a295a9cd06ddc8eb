#pragma once
// From the loaded configuration to what the runtime and the policies take:
// [reactor] -> runtime_options, [sched] and [busy_poll] -> policy_config.
// Checks what needs the machine (reactor.cores against the topology) and
// reports it in the loader's "file:line: key: what" shape.

#include <expected>
#include <string>

#include "affine/config.hh"
#include "affine/runtime.hh"
#include "affine/topology.hh"
#include "reactor/policy/config.hh"

namespace affine::detail {

struct runtime_setup {
  runtime_options options;
  policy::policy_config policy;
};

std::expected<runtime_setup, std::string> runtime_setup_from(const config::table_view& cfg,
                                                             const topology& topo);

// reactor.cores resolved against the topology: "auto" (every core less those
// other processes keep busy: auto_cores.hh), "all", a list, or a count (the
// first N, spread over nodes).
std::expected<std::vector<core_id>, std::string> reactor_cores_from(const config::table_view& cfg,
                                                                    const topology& topo);

}  // namespace affine::detail
