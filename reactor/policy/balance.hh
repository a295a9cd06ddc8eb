#pragma once
// What a core with too little work steals: the balancer's decision, walking
// the core's scheduling domains outward (llc, node, machine) like the kernel's
// newidle balance, so a fiber moves as short a distance as the load allows.

#include <optional>

#include "affine/topology.hh"
#include "reactor/policy/config.hh"
#include "reactor/policy/view.hh"

namespace affine::policy {

struct steal_choice {
  core_id victim;      // take one waiting fiber from here
  domain_level level;  // the innermost domain in which the victim was found
  friend bool operator==(const steal_choice&, const steal_choice&) = default;
};

// For an idle core (nr_running 0) this is the newidle steal; called at the
// balance interval by a busy core it is the periodic balance, since the
// imbalance is measured against the thief's own nr_running. At each level the
// busiest reactor core of the domain other than the thief is the candidate
// (most runnable, then highest load, then lowest id); it is chosen when its
// nr_running exceeds the thief's by at least cfg.steal_threshold(level). nullopt when
// stealing is off or no level has such a core. Pure: no allocation, no state.
std::optional<steal_choice> steal_from(const sched_view& view, core_id thief,
                                       const policy_config& cfg) noexcept;

}  // namespace affine::policy
