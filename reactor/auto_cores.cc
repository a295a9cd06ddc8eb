// reactor.cores = "auto" (auto_cores.hh).

#include "reactor/auto_cores.hh"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace affine::detail {

std::expected<std::vector<core_id>, std::string> auto_cores(const topology& topo, std::span<const core_id> allowed,
                                                            double others_load) {
  if (allowed.empty()) allowed = topo.all_cores();
  if (allowed.empty()) return std::unexpected("this machine has no cores");
  const auto mine = double(allowed.size());
  const double share = mine / double(std::max<std::size_t>(1, topo.core_count()));
  const double busy = std::round(std::clamp(others_load * share, 0.0, mine));
  const auto count = std::size_t(std::max(1.0, mine - busy));
  // Spread over nodes: the allowed cores of each node in turn, node 0 first.
  std::map<unsigned, std::vector<core_id>> by_node;
  for (const core_id c : allowed) by_node[topo.core(c).node].push_back(c);
  std::vector<core_id> out;
  for (std::size_t round = 0; out.size() < count; ++round) {
    for (auto& [node, cores] : by_node) {
      if (round < cores.size() && out.size() < count) out.push_back(cores[round]);
    }
  }
  std::ranges::sort(out);
  return out;
}

std::vector<core_id> allowed_cores(const topology& topo) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::vector<core_id> out;
  for (const core_id c : topo.all_cores()) {
    const unsigned cpu = topo.core(c).os_cpu;
    if (cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set)) out.push_back(c);
  }
  return out;
}

double load_average_1m() {
  double load = 0;
  if (std::FILE* f = std::fopen("/proc/loadavg", "re")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = 0;
    std::fclose(f);
  }
  return load;
}

}  // namespace affine::detail
