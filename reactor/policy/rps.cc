// rps_target(): get_rps_cpu() with the RFS table reduced to "where the reader
// last ran", plus seed 003's idle-core search.

#include "reactor/policy/rps.hh"

namespace affine::policy {

std::string_view to_string(rps_mode m) {
  switch (m) {
    case rps_mode::off: return "off";
    case rps_mode::hash: return "hash";
    case rps_mode::flow: return "flow";
    case rps_mode::idle: return "idle";
  }
  return "unknown";
}

std::string_view to_string(rps_reason r) {
  switch (r) {
    case rps_reason::off: return "off";
    case rps_reason::hash: return "hash";
    case rps_reason::flow: return "flow";
    case rps_reason::no_consumer: return "no_consumer";
    case rps_reason::idle_consumer: return "idle_consumer";
    case rps_reason::idle_llc: return "idle_llc";
    case rps_reason::idle_none: return "idle_none";
  }
  return "unknown";
}

namespace {

// Kernel reciprocal_scale(): maps a 32-bit hash onto [0, n) by its high bits,
// as get_rps_cpu() indexes the RPS map, without a division.
std::size_t scale(std::uint32_t hash, std::size_t n) {
  return static_cast<std::size_t>((static_cast<std::uint64_t>(hash) * n) >> 32);
}

core_id by_hash(const sched_view& view, std::uint32_t hash) {
  return view.reactor_cores[scale(hash, view.reactor_cores.size())];
}

// seed 003, Eric Dumazet: "A cpu spending 90% of its cycles processing IRQ
// might be considered 'idle'". An idle core busy with packets is no target.
bool takes_rx(const sched_view& view, core_id c, const policy_config& cfg) {
  const core_state& s = view.at(c);
  return s.idle && s.rx_share < cfg.rps_idle_max_rx_share;
}

// seed 003: "queue RPS packets on idle CPU in the L3 domain of the consumer,
// so backlog processing of the packets and the application can execute in
// parallel". The scan starts at the flow's hash position so that many flows
// with consumers in one LLC spread over its idle cores instead of all landing
// on the first.
rps_choice idle_in_llc(const sched_view& view, core_id consumer, std::uint32_t hash,
                       const policy_config& cfg) {
  if (takes_rx(view, consumer, cfg)) return {consumer, rps_reason::idle_consumer};
  const std::span<const core_id> llc = view.topo.cores_in_llc(view.topo.core(consumer).llc);
  const std::size_t n = llc.size();
  const std::size_t start = scale(hash, n);
  for (std::size_t i = 0; i < n; ++i) {
    const core_id c = llc[(start + i) % n];
    if (c != consumer && takes_rx(view, c, cfg)) return {c, rps_reason::idle_llc};
  }
  // DESIGN.md P3: no idle core in the LLC -> behave as flow.
  return {consumer, rps_reason::idle_none};
}

}  // namespace

rps_choice rps_target(const sched_view& view, core_id rx_core, std::optional<core_id> consumer_core,
                      std::uint32_t flow_hash, rps_mode mode, const policy_config& cfg) noexcept {
  switch (mode) {
    case rps_mode::off: return {rx_core, rps_reason::off};
    case rps_mode::hash: return {by_hash(view, flow_hash), rps_reason::hash};
    case rps_mode::flow:
    case rps_mode::idle:
      break;
  }
  // RFS without a recorded reader falls back to RPS's hash, as the kernel does.
  if (!consumer_core) return {by_hash(view, flow_hash), rps_reason::no_consumer};
  if (mode == rps_mode::flow) return {*consumer_core, rps_reason::flow};
  return idle_in_llc(view, *consumer_core, flow_hash, cfg);
}

distance handoff_distance(const sched_view& view, core_id rx_core, const rps_choice& choice) noexcept {
  return view.topo.dist(rx_core, choice.core);
}

}  // namespace affine::policy
