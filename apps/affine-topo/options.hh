#pragma once
// affine-topo's command line, parsed into a plain struct before anything is
// loaded, so a new source of settings (a config file) only has to fill the
// same struct.

#include <expected>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "affine/topology.hh"

namespace affine_topo {

enum class source_kind { system, synthetic, xml };

struct options {
  source_kind source = source_kind::system;
  std::string source_arg;        // the synthetic description or the XML path
  // Unset ones come from the configuration (--config, --set), else defaults.
  std::optional<unsigned> queues;  // default: one per reactor core, at most 16
  std::optional<unsigned> nic_node;  // default: port[0]'s node, else 0
  std::optional<affine::rxq_placement> placement;  // default: reactor.rxq_placement
  std::optional<std::string> cores;  // parse_core_list syntax; default: reactor.cores
  std::string config_path;         // --config FILE
  std::vector<std::string> sets;   // --set section.key=value, in order
  bool json = false;
  bool help = false;
};

// Queues a port can have (DPDK's RTE_MAX_QUEUES_PER_PORT).
inline constexpr unsigned max_queues = 1024;
// Default queue count cap when --queues is not given.
inline constexpr unsigned default_queue_cap = 16;

// argv without the program name. Errors are one line, without the
// "affine-topo: " prefix.
std::expected<options, std::string> parse_args(std::span<const char* const> args);

std::string usage();

}  // namespace affine_topo
