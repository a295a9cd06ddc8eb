#include <fmt/format.h>

#include "affine/stats.hh"
#include "reactor/policy/place.hh"
#include "reactor/policy/spin.hh"

namespace affine {

std::string format_counters(unsigned core, const core_counters& c) {
  std::string out = fmt::format(
      "c{} turns={} run={} switches={} spawned={} finished={} migrations={} wake_local={} "
      "wake_remote={} steals={}/{}/{} overruns={} preempt={} sleeps={} kicks={} idle_ms={} "
      "sleep_ms={} timers={} preemptions={} rx_interrupts={} refused={}/{}/{} stalls={}",
      core, c.loop_turns, c.fibers_run, c.switches, c.fibers_spawned, c.fibers_finished,
      c.migrations, c.wakeups_local, c.wakeups_remote, c.steals[0], c.steals[1], c.steals[2],
      c.quota_overruns, c.preempt_yields, c.sleeps, c.kicks_sent, c.idle_ns / 1'000'000,
      c.sleep_ns / 1'000'000, c.timers_fired, c.preemptions, c.rx_interrupts, c.preempt_refused[0], c.preempt_refused[1],
      c.preempt_refused[2], c.stalls);
  for (std::size_t r = 0; r < c.placements.size(); ++r)
    if (c.placements[r] != 0)
      out += fmt::format(" place.{}={}", policy::to_string(policy::wake_reason(r)), c.placements[r]);
  if (c.placements_idle_sibling != 0) out += fmt::format(" place.idle_sibling={}", c.placements_idle_sibling);
  static_assert(std::tuple_size_v<decltype(c.spin_plans)> == policy::spin_reason_count);
  for (std::size_t r = 0; r < c.spin_plans.size(); ++r)
    if (c.spin_plans[r] != 0) out += fmt::format(" spin.{}={}", policy::to_string(policy::spin_reason(r)), c.spin_plans[r]);
  for (std::size_t r = 0; r < c.busy_poll_plans.size(); ++r)
    if (c.busy_poll_plans[r] != 0)
      out += fmt::format(" poll_plan.{}={}", policy::to_string(policy::spin_reason(r)), c.busy_poll_plans[r]);
  out += fmt::format(" cpu_wait_us={} cpu_shared={} wake_ns={}", c.cpu_wait_ns / 1'000, c.cpu_shared_samples, c.wake_ns);
  return out;
}

}  // namespace affine
