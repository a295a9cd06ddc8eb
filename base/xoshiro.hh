#pragma once
// The project's one pseudo-random generator: xoshiro256** with splitmix64
// for seeding. Written out rather than taken from <random> because the
// standard distributions are not specified bit for bit, and a lossy test or a
// simulated scenario must replay the same numbers on every compiler and
// library. Callers derive their state (streams, seeds) as they need.

#include <array>
#include <cstdint>

namespace affine {

// One step of splitmix64 from `x`: spreads a seed over 64 bits, and derives
// independent stream seeds.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class xoshiro256ss {
 public:
  explicit constexpr xoshiro256ss(std::array<std::uint64_t, 4> state) noexcept : s_(state) {}

  constexpr std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1): the top 53 bits, exactly representable.
  constexpr double uniform() noexcept { return double(next() >> 11) * 0x1.0p-53; }

  // True with probability p; draws nothing when p is 0, so a disabled user
  // of a stream leaves it where it was.
  constexpr bool chance(double p) noexcept { return p > 0 && uniform() < p; }

  // Uniform in [0, bound); 0 when bound is 0. Multiply-shift (Lemire)
  // without the rejection step: the bias is below 2^-32 for bounds under
  // 2^32, and it keeps one draw per call.
  constexpr std::uint64_t below(std::uint64_t bound) noexcept {
    if (bound == 0) return 0;
    return std::uint64_t((unsigned __int128)next() * bound >> 64);
  }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }

  std::array<std::uint64_t, 4> s_;
};

}  // namespace affine
