#pragma once
// The wire's random numbers: base/xoshiro.hh, seeded with four steps of
// splitmix64 from the stream's seed.

#include <cstdint>

#include "base/xoshiro.hh"

namespace affine::drivers::wire {

class rng : public xoshiro256ss {
 public:
  explicit rng(std::uint64_t seed) noexcept
      : xoshiro256ss({mix64(seed), mix64(seed + k), mix64(seed + 2 * k), mix64(seed + 3 * k)}) {}

 private:
  static constexpr std::uint64_t k = 0x9e3779b97f4a7c15ULL;  // splitmix64's increment
};

}  // namespace affine::drivers::wire
