#pragma once
// How long to spin before sleeping: an idle reactor's spin (reactor.idle)
// and a reader's busy poll (busy_poll, seed 001), when they adapt.
//
// Spinning is a bet that the wait ends soon. A spin of at most what a sleep
// costs (its wake latency, plus the nap's overshoot where a poller has no
// interrupt) never pays more than twice the better choice, whatever the
// wait (the ski-rental bound of two-phase waiting). And spinning only pays
// when the wait ends inside that window often enough: the governor keeps a
// decaying hit rate of recent waits, measured whether it spun or not (a
// wait it slept through still says whether a spin would have caught it),
// and stops spinning while too few would have. Seed 001's rule comes first:
// when another task waits for the CPU, nobody spins (its nr_running counts
// other processes too).
//
// Pure: no clock, no counters; the reactor passes times in and counts the
// plans' reasons (core_counters::spin_plans, busy_poll_plans).

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace affine::policy {

enum class spin_reason : std::uint8_t {
  fixed,       // not adaptive: the configured length, as before (reactor.idle = "sleep", busy_poll.mode = "fixed")
  paying,      // recent waits ended inside the window often enough
  probe,       // not paying, but one spin in probe_every, to learn whether that changed
  shared,      // another task waits for this CPU (seed 001, counting processes): no spin
  not_paying,  // recent waits mostly outlasted the window: no spin
  off,         // the configured length is 0, or the sleep costs nothing to spin against
};
inline constexpr std::size_t spin_reason_count = static_cast<std::size_t>(spin_reason::off) + 1;
std::string_view to_string(spin_reason r);

struct spin_plan {
  std::uint64_t window_ns;  // spin at most this long; 0: sleep at once
  spin_reason reason;
  friend bool operator==(const spin_plan&, const spin_plan&) = default;
};

class spin_governor {
 public:
  // The hit rate is kept in 1/256ths, each wait weighing 1/8 (about the last
  // eight to sixteen waits). Spins pay while at least a quarter of recent
  // waits would have ended inside the window: a miss costs at most one
  // window of CPU, a hit saves a sleep of about the same, and the rate must
  // fall under an eighth before spinning stops (hysteresis).
  static constexpr std::uint32_t scale = 256;
  static constexpr std::uint32_t pay_rate = scale / 4;
  static constexpr std::uint32_t stop_rate = scale / 8;
  static constexpr std::uint32_t probe_every = 32;

  // At the start of a wait. cap_ns: the configured bound (reactor.spin_us,
  // busy_poll.budget_us); sleep_cost_ns: what sleeping through the wait
  // costs; cpu_shared: another task waits for this CPU.
  spin_plan plan(std::uint64_t cap_ns, std::uint64_t sleep_cost_ns, bool cpu_shared) noexcept;

  // At the end of the wait planned last: how long it lasted, from its start
  // to when what ended it came (a sleeper subtracts its wake latency). It
  // counts as a hit when it ended inside the window a spin would have had
  // (the ski-rental bound), spun or not.
  void record(std::uint64_t wait_ns) noexcept;

  std::uint32_t hit_rate() const noexcept { return rate_; }
  bool paying() const noexcept { return paying_; }

 private:
  std::uint32_t rate_ = scale;  // optimistic: a new reactor spins until waits say otherwise
  bool paying_ = true;
  std::uint32_t since_probe_ = 0;
  std::uint64_t window_ = 0;  // the last plan's ski-rental window
};

// The ski-rental window: the configured bound, or less where a sleep costs less.
constexpr std::uint64_t spin_window(std::uint64_t cap_ns, std::uint64_t sleep_cost_ns) noexcept {
  return cap_ns < sleep_cost_ns ? cap_ns : sleep_cost_ns;
}

}  // namespace affine::policy
