#pragma once
// What a reactor's idle rungs learn and decide (loop.cc runs them): how much
// a sleep costs on this machine, whether other tasks wait for the CPU, how
// long to spin (policy::spin_governor, also for readers' busy polls on this
// core), and how long a nap may be where a poller has no interrupt.
//
// Owner-only, but `kicked_at`, which a waker on another core writes.

#include <atomic>
#include <cstdint>

#include "reactor/cpu_share.hh"
#include "reactor/policy/spin.hh"

namespace affine::detail {

struct idle_state {
  // Naps where a poller has no interrupt (memif, the in-process wire): a
  // quarter of the silence so far, so a nap adds at most a quarter to the
  // gap it ends; from min_nap_ns right after traffic to max_nap_ns (2 ms,
  // about 500 wakes a second and a few tenths of a percent of a CPU when
  // nothing comes).
  static constexpr std::uint64_t min_nap_ns = 10'000;
  static constexpr std::uint64_t max_nap_ns = 2'000'000;
  // Wake latencies above this are a preempted sleeper, not the machine's cost.
  static constexpr std::uint64_t max_wake_sample_ns = 1'000'000;

  policy::spin_governor spin;       // the reactor's idle spin (reactor.idle = "adaptive")
  policy::spin_governor busy_poll;  // readers' busy polls here (busy_poll.mode = "adaptive")
  cpu_share_monitor cpu;

  // How long from what ends a sleep (a kick, a timer's deadline) until the
  // reactor runs again: a decaying mean, measured at start and on every wake
  // whose cause has a time.
  std::uint64_t wake_ns = 0;
  // Written by a waker just before it kicks this core's eventfd.
  std::atomic<std::uint64_t> kicked_at{0};

  // The wait in progress: from the first idle turn after work to the next
  // turn with work. `ended_at` is when what ended it came, where the reactor
  // slept through that moment (0: it ended while awake).
  bool waiting = false;
  std::uint64_t wait_start = 0;
  std::uint64_t ended_at = 0;
  std::uint64_t last_work = 0;  // the last turn with work
  bool interrupts = false;      // every poller can end a sleep (no naps), as of the last idle turn

  // Measures the wake latency of a short timed sleep a few times, on the
  // reactor thread after its timer slack was set.
  void calibrate(int epoll_fd);
  void note_wake(std::uint64_t latency_ns);

  // The next nap, from the silence since the last turn with work.
  std::uint64_t nap_ns(std::uint64_t now) const;
  // What sleeping through a wait costs: a wake, plus half a nap (the
  // expected lateness) where a poller has no interrupt.
  std::uint64_t sleep_cost_ns(bool all_armed, std::uint64_t now) const {
    return wake_ns + (all_armed ? 0 : nap_ns(now) / 2);
  }
};

}  // namespace affine::detail
