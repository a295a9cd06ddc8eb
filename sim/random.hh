#pragma once
// Deterministic randomness for the simulator: a small generator of our own
// (xoshiro256**, seeded through splitmix64) and the service-time shapes the
// scenarios name. The standard library's distributions are left alone because
// their output may differ between library versions; a scenario with the same
// seed must print the same figures everywhere.

#include <cstdint>
#include <string_view>

#include "base/xoshiro.hh"

namespace affine::sim {

// mix64 (splitmix64) also derives independent streams and flow hashes.
using affine::mix64;

class rng : public xoshiro256ss {
 public:
  // Stream `stream` of the run seeded with `seed`: every client and every
  // server has its own stream, so the variants of a scenario draw the same
  // service and think times for the same request (common random numbers),
  // and a changed policy changes the outcome only through what it decides.
  rng(std::uint64_t seed, std::uint64_t stream) noexcept : xoshiro256ss(seed_state(seed, stream)) {}

 private:
  static std::array<std::uint64_t, 4> seed_state(std::uint64_t seed, std::uint64_t stream) noexcept {
    std::uint64_t x = mix64(seed) ^ mix64(stream + 0x632be59bd9b4e019ULL);
    std::array<std::uint64_t, 4> s{};
    for (auto& w : s) w = x = mix64(x);
    return s;
  }
};

enum class dist_kind : std::uint8_t { fixed, exponential, lognormal };
std::string_view to_string(dist_kind k);  // "fixed", "exponential", "lognormal", as in scenario files

// A duration distribution by its mean and coefficient of variation (cv is
// ignored by fixed; exponential's is 1 by definition).
struct distribution {
  dist_kind kind = dist_kind::fixed;
  std::uint64_t mean_ns = 0;
  std::uint32_t cv_pct = 100;

  std::uint64_t sample(rng& r) const noexcept;
};

}  // namespace affine::sim
