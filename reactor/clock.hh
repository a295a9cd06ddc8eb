#pragma once
// The reactor clock's machinery (reactor/clock.cc): the time-stamp counter
// scaled into CLOCK_MONOTONIC's nanoseconds and kept in step with it for the
// life of the process. now_ns() (include/affine/fiber.hh) reads the one
// process-wide tsc_clock; tests make their own to start one wrong on purpose.

#include <atomic>
#include <cstdint>
#include <optional>

#include "reactor/cycles.hh"

namespace affine::detail {

class tsc_clock {
 public:
  // What now() promises against CLOCK_MONOTONIC, read at the same instant:
  // never further apart than this, at any read, from the first on, on any
  // thread (docs/reactor.md "Clock" has the figures behind it). Durations
  // are then right to twice this; the clock never runs backwards, on one
  // thread or across threads (a time another thread read is never in the
  // future of a later read), and never jumps backwards to get back in step.
  static constexpr std::int64_t bound_ns = 20'000;

  struct start {
    // Scale the counter by a rate this far from the one measured (ppm): a
    // clock that starts wrong, to see it corrected. Production passes 0.
    double rate_error_ppm = 0;
    // A clock moved only by set_manual(), from this time on: virtual time
    // for a harness that runs the runtime and the stack unchanged, every
    // timer firing when the harness says (tests/fuzz/stack.cc). No counter
    // is read or calibrated.
    std::optional<std::uint64_t> manual_ns{};
  };
  // Measures the counter's rate against CLOCK_MONOTONIC (5 ms) where the
  // kernel keeps time by the counter; elsewhere, or with AFFINE_CLOCK=monotonic,
  // now() is clock_gettime itself.
  explicit tsc_clock(start s);
  tsc_clock() : tsc_clock(start{}) {}
  tsc_clock(const tsc_clock&) = delete;
  tsc_clock& operator=(const tsc_clock&) = delete;

  // Nanoseconds on CLOCK_MONOTONIC's epoch. Wait-free for readers: a thread
  // stopped while it re-calibrates delays no reader.
  std::uint64_t now() noexcept {
    if (!scaled_) [[unlikely]]
      return manual_ ? manual_now_.load(std::memory_order_acquire) : monotonic_ns();
    for (;;) {
      const std::uint64_t g = gen_.load(std::memory_order_acquire);
      const piece& p = pieces_[g & 1];
      const std::uint64_t base = p.base_tsc.load(std::memory_order_acquire);
      const std::uint64_t ns = p.base_ns.load(std::memory_order_acquire);
      const std::uint64_t rate = p.slew_q32.load(std::memory_order_acquire);
      const std::uint64_t len = p.len_ticks.load(std::memory_order_acquire);
      const std::uint64_t t = cycles_ordered();
      if (gen_.load(std::memory_order_acquire) != g) [[unlikely]]
        continue;  // a new piece was published meanwhile: read it
      if (const std::uint64_t dt = t - base; dt < len) [[likely]]
        return ns + mul_q32(dt, rate);
      if (const auto v = outside_piece(g, t)) return v;
    }
  }

  bool scaled() const noexcept { return scaled_; }
  bool manual() const noexcept { return manual_; }
  // Moves a manual clock to `ns`; an earlier time is ignored (the clock
  // never goes back). Precondition: manual().
  void set_manual(std::uint64_t ns) noexcept;
  // Counter ticks per microsecond as first measured (time slices, spins).
  std::uint64_t ticks_per_us() const noexcept { return ticks_per_us_; }

  struct counters {
    std::uint64_t calibrations;      // pieces published after the first
    std::uint64_t samples_rejected;  // (counter, clock) pairs too far apart to trust
    std::uint64_t pieces_dropped;    // a piece not published: its writer was stopped too long
    std::uint64_t late_publishes;    // published after its base (clock.cc: the one residual risk)
    std::uint64_t steps_forward;     // behind by more than step_ns: caught up at once
  };
  counters stats() const noexcept;

  [[gnu::noinline]] static std::uint64_t monotonic_ns() noexcept;

  // One (counter, CLOCK_MONOTONIC) pair: the counter read as the middle of
  // the closest of 16 brackets around a clock read, and that bracket's
  // width in ticks (the pair's error is at most half of it).
  struct sample {
    std::uint64_t tsc = 0, ns = 0, gap = ~0ULL;
  };
  static sample take_sample() noexcept;

 private:
  static std::uint64_t mul_q32(std::uint64_t ticks, std::uint64_t q32) noexcept {
    return std::uint64_t((unsigned __int128)ticks * q32 >> 32);
  }
  // The time at counter value t outside the read piece's main span; 0 when
  // the piece changed under the read (the caller reads again).
  [[gnu::noinline]] std::uint64_t outside_piece(std::uint64_t g, std::uint64_t t) noexcept;
  void recalibrate(std::uint64_t t) noexcept;

  // One piece of the clock, a linear map from counter to nanoseconds:
  //   [base_tsc, base_tsc + len_ticks): base_ns + (t - base_tsc) * slew
  //     (the measured rate, plus what closes the offset over the piece);
  //   from end_tsc = base_tsc + len_ticks on: end_ns + (t - end_tsc) * rate
  //     (the measured rate alone, until the next piece is published);
  //   before base_tsc: the previous piece's tail. A piece is published
  //     `margin` ahead of its base, so a reader still holding the previous
  //     piece and a reader holding this one agree at every counter value.
  // Rates are nanoseconds per tick in 32.32 fixed point.
  struct piece {
    std::atomic<std::uint64_t> base_tsc{0}, base_ns{0}, slew_q32{0}, len_ticks{0};
    std::atomic<std::uint64_t> end_ns{0}, rate_q32{0};
    std::atomic<std::uint64_t> prev_end_tsc{0}, prev_end_ns{0}, prev_rate_q32{0};
  };

  bool scaled_ = false;
  bool manual_ = false;
  std::atomic<std::uint64_t> manual_now_{0};
  std::uint64_t ticks_per_us_ = 1;
  alignas(64) std::atomic<std::uint64_t> gen_{0};
  piece pieces_[2];

  // The writer's state: one writer at a time (writing_), any thread.
  alignas(64) std::atomic<bool> writing_{false};
  std::atomic<std::uint64_t> next_try_tsc_{0};
  sample last_{};               // the sample the current piece was made from
  double ticks_per_ns_ = 1;     // the rate last measured
  std::uint64_t period_ns_ = 0; // the current piece's length, doubling to max
  std::atomic<std::uint64_t> calibrations_{0}, samples_rejected_{0}, pieces_dropped_{0}, late_publishes_{0}, steps_forward_{0};
};

// The process's clock, which now_ns() reads (made at its first use).
tsc_clock& process_clock();

// Makes the process's clock a manual one starting at `start_ns`, if it is
// not made yet: call it before anything reads the time. Returns whether the
// process clock is manual. set_manual_clock moves it (process_clock().
// set_manual). With a manual clock every spin and busy poll bounded by time
// must be off (reactor.spin_us = 0, busy_poll.budget_us = 0): time stands
// still while they wait for it.
bool start_manual_clock(std::uint64_t start_ns);
void set_manual_clock(std::uint64_t ns) noexcept;

}  // namespace affine::detail
