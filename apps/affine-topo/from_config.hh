#pragma once
// What the RX plan is computed from: the command line first, then an affine
// configuration file (--config, --set), then the defaults.

#include <expected>
#include <string>
#include <vector>

#include "affine/topology.hh"
#include "apps/affine-topo/options.hh"

namespace affine_topo {

struct plan_input {
  std::vector<affine::core_id> cores;
  unsigned queues = 1;
  unsigned nic_node = 0;
  affine::rxq_placement placement = affine::rxq_placement::local;
};

std::expected<plan_input, std::string> resolve(const options& o, const affine::topology& topo);

}  // namespace affine_topo
