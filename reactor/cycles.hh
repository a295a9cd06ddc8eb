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

// TSC ticks per microsecond, measured once against CLOCK_MONOTONIC (clock.cc).
std::uint64_t cycles_per_us() noexcept;

}  // namespace affine::detail
