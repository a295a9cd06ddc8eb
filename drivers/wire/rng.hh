#pragma once
// The wire's random numbers: xoshiro256** seeded through splitmix64. Written
// out rather than taken from <random> because the standard distributions are
// not specified bit for bit, and a failing lossy test must replay the same
// drops on every compiler and library.

#include <cstdint>

namespace affine::drivers::wire {

class rng {
 public:
  explicit rng(std::uint64_t seed) noexcept {
    for (auto& s : state_) s = splitmix64(seed);
  }

  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1): the top 53 bits, exactly representable.
  double uniform() noexcept { return double(next() >> 11) * 0x1.0p-53; }

  // True with probability p; draws nothing when p is 0, so a disabled
  // impairment leaves its stream where it was.
  bool chance(double p) noexcept { return p > 0 && uniform() < p; }

  // Uniform in [0, bound); 0 when bound is 0. Multiply-shift (Lemire) without
  // the rejection step: the bias is below 2^-32 for the bounds used here
  // (frame lengths, nanoseconds of jitter), and it keeps one draw per call.
  std::uint64_t below(std::uint64_t bound) noexcept {
    if (bound == 0) return 0;
    return std::uint64_t((unsigned __int128)next() * bound >> 64);
  }

  // splitmix64: turns one seed into well-spread state words, and derives
  // independent stream seeds from (seed, stream id).
  static std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }

  std::uint64_t state_[4];
};

}  // namespace affine::drivers::wire
