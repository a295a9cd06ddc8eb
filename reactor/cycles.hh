#pragma once
// The CPU's time-stamp counter, for time slices and short spins: reading it
// costs about 15 ns here against about 38 ns for clock_gettime, and the
// reactor reads it on every fiber switch (quota accounting). It is used for
// durations on one core; timers and deadlines use now_ns() (reactor/clock.cc,
// which scales this same counter where the kernel keeps time by it).

#include <x86intrin.h>

#include <cstdint>

namespace affine::detail {

inline std::uint64_t cycles() noexcept { return __rdtsc(); }

// The counter read after every earlier instruction has completed (lfence;
// rdtsc, the kernel's rdtsc_ordered). A bare rdtsc may execute before an
// earlier load: a thread that loads a time another core published and then
// reads the counter could read it early and see that time in the future
// (by up to 5,659 ticks, some 2 us, on this machine's EPYC VM, where the
// counters are in step). now_ns() reads this one: about 21 ns against 11.
inline std::uint64_t cycles_ordered() noexcept {
  _mm_lfence();
  return __rdtsc();
}

// TSC ticks per microsecond, measured once against CLOCK_MONOTONIC (clock.cc).
std::uint64_t cycles_per_us() noexcept;

}  // namespace affine::detail
