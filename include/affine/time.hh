#pragma once
// Time for fibers: the reactor clock, now_ns(), and `deadline`, which every
// blocking call of the API takes.
//
//   s.read(buf, 100ms);                              // gives up 100 ms from now
//   s.read(buf, std::chrono::steady_clock::now() + 2s);
//   s.read(buf, affine::now_ns() + 5'000'000);        // raw reactor-clock nanoseconds
//   s.read(buf);                                      // no deadline
//
// A call that reaches its deadline returns std::errc::timed_out (or false,
// or an empty optional, as its header says).

#include <chrono>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace affine {

// Nanoseconds on the reactor clock, as the timer wheel uses: CLOCK_MONOTONIC's
// epoch and rate (std::chrono::steady_clock's, on Linux), scaled from the TSC
// where the kernel's clocksource is the TSC and re-calibrated against
// CLOCK_MONOTONIC as it runs. Its promise: at every read within 20 us of
// CLOCK_MONOTONIC read at the same instant, so a duration it measures is
// right to 40 us; it never runs backwards, on one thread or across threads
// (docs/reactor.md "Clock"). AFFINE_CLOCK=monotonic makes it clock_gettime.
std::uint64_t now_ns();

using clock = std::chrono::steady_clock;

inline constexpr std::uint64_t no_deadline = std::numeric_limits<std::uint64_t>::max();

// When a blocking call gives up: an absolute time on the reactor clock.
class deadline {
 public:
  // Never.
  constexpr deadline() noexcept = default;
  // Raw now_ns() nanoseconds (no_deadline: never).
  constexpr deadline(std::uint64_t ns) noexcept : ns_(ns) {}
  // This long from now; zero or less: already passed (the call only looks).
  template <class Rep, class Period>
  deadline(std::chrono::duration<Rep, Period> timeout) noexcept : ns_(from_now(timeout)) {}
  // A time point of steady_clock, whose epoch the reactor clock keeps.
  template <class Duration>
  constexpr deadline(std::chrono::time_point<std::chrono::steady_clock, Duration> at) noexcept
      : ns_(from_epoch(at.time_since_epoch())) {}

  constexpr std::uint64_t ns() const noexcept { return ns_; }
  constexpr operator std::uint64_t() const noexcept { return ns_; }
  constexpr bool never() const noexcept { return ns_ == no_deadline; }

 private:
  template <class Rep, class Period>
  static std::uint64_t from_now(std::chrono::duration<Rep, Period> d) noexcept {
    const std::uint64_t now = now_ns();
    if (d <= d.zero()) return now;
    // Saturating: a timeout past the clock's range is no deadline at all.
    if (d >= std::chrono::duration_cast<std::chrono::duration<Rep, Period>>(
                 std::chrono::nanoseconds(std::numeric_limits<std::int64_t>::max())))
      return no_deadline;
    const auto ns = std::uint64_t(std::chrono::ceil<std::chrono::nanoseconds>(d).count());
    return ns >= no_deadline - now ? no_deadline : now + ns;
  }
  template <class Duration>
  static constexpr std::uint64_t from_epoch(Duration since_epoch) noexcept {
    if (since_epoch <= Duration::zero()) return 0;
    return std::uint64_t(std::chrono::ceil<std::chrono::nanoseconds>(since_epoch).count());
  }

  std::uint64_t ns_ = no_deadline;
};

}  // namespace affine
