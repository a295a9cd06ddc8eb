// steal_from(): the domain walk. Spans come straight from the topology
// (cores_in_llc, cores_in_node, all_cores); topology::domains() is not used
// because it allocates.

#include "reactor/policy/balance.hh"

#include <array>
#include <span>
#include <utility>

namespace affine::policy {

namespace {

// Kernel find_busiest_queue(), reduced to runnable counts and load.
std::optional<core_id> busiest(const sched_view& view, std::span<const core_id> span, core_id thief) {
  std::optional<core_id> best;
  for (const core_id c : span) {
    if (c == thief) continue;
    if (!best) {
      best = c;
      continue;
    }
    const core_state& s = view.at(c);
    const core_state& b = view.at(*best);
    // Spans ascend by id, so keeping the first on a full tie keeps the lowest id.
    if (s.nr_running > b.nr_running || (s.nr_running == b.nr_running && s.load > b.load)) best = c;
  }
  return best;
}

}  // namespace

std::optional<steal_choice> steal_from(const sched_view& view, core_id thief,
                                       const policy_config& cfg) noexcept {
  if (!cfg.steal) return std::nullopt;
  const core_info& info = view.topo.core(thief);
  const std::uint32_t own = view.nr_running(thief);
  const std::array<std::pair<domain_level, std::span<const core_id>>, 3> levels = {{
      {domain_level::llc, view.topo.cores_in_llc(info.llc)},
      {domain_level::node, view.topo.cores_in_node(info.node)},
      {domain_level::machine, view.topo.all_cores()},
  }};
  for (const auto& [level, span] : levels) {
    const std::optional<core_id> victim = busiest(view, span, thief);
    if (!victim) continue;
    const std::uint32_t theirs = view.nr_running(*victim);
    if (theirs > own && theirs - own >= cfg.steal_threshold(level)) return steal_choice{*victim, level};
  }
  return std::nullopt;
}

}  // namespace affine::policy
