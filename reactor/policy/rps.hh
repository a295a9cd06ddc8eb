#pragma once
// Which core processes a batch received on an RX queue: RPS/RFS and seed 003's
// "idle core in the consumer's L3 domain", chosen per RX queue as Eric Dumazet
// asked in that thread (port.rxq.rps).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "affine/topology.hh"
#include "reactor/policy/config.hh"
#include "reactor/policy/view.hh"

namespace affine::policy {

enum class rps_mode : std::uint8_t {
  off,   // the queue's own core processes its packets
  hash,  // RPS: a reactor core by flow hash
  flow,  // RFS: the core where the reading fiber last ran
  idle,  // seed 003: an idle core sharing the LLC with the consumer
};
std::string_view to_string(rps_mode m);  // "off", "hash", "flow", "idle", as in TOML

enum class rps_reason : std::uint8_t {
  off,            // mode off: the RX core
  hash,           // mode hash
  flow,           // mode flow: the consumer's core
  no_consumer,    // flow or idle, but no fiber has read the flow yet: hash
  idle_consumer,  // idle: the consumer's own core is idle
  idle_llc,       // idle: another idle core in the consumer's LLC
  idle_none,      // idle: none idle in the LLC, fall back to flow
};
// Sizes the reactor's per-core counter arrays, indexed by the enum.
inline constexpr std::size_t rps_reason_count = static_cast<std::size_t>(rps_reason::idle_none) + 1;
std::string_view to_string(rps_reason r);

struct rps_choice {
  core_id core;
  rps_reason reason;
  friend bool operator==(const rps_choice&, const rps_choice&) = default;
};

// Decide for one batch of one flow. consumer_core is where the fiber reading
// the flow last ran, if known. Preconditions: the view is well formed;
// rx_core and consumer_core are reactor cores. Pure: no allocation, no state.
rps_choice rps_target(const sched_view& view, core_id rx_core, std::optional<core_id> consumer_core,
                      std::uint32_t flow_hash, rps_mode mode, const policy_config& cfg) noexcept;

// How far a batch travels from its RX core to the chosen core: the reactor
// counts handoffs by this.
distance handoff_distance(const sched_view& view, core_id rx_core, const rps_choice& choice) noexcept;

}  // namespace affine::policy
