#pragma once
// What affine-topo prints, as tables for people or one JSON object for
// scripts.

#include <string>
#include <vector>

#include "affine/topology.hh"

namespace affine_topo {

struct report {
  const affine::topology& topo;
  std::string source;  // "system", "synthetic" or "xml"
  std::string source_arg;
  std::vector<affine::core_id> reactor_cores;
  unsigned nic_node = 0;
  affine::rxq_placement placement = affine::rxq_placement::local;
  std::vector<affine::rxq_assignment> plan;
};

std::string render_table(const report& r);
// One line, ending in a newline.
std::string render_json(const report& r);

}  // namespace affine_topo
