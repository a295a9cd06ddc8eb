#pragma once
// Deterministic randomness for the simulator: a small generator of our own
// (xoshiro256**, seeded through splitmix64) and the service-time shapes the
// scenarios name. The standard library's distributions are left alone because
// their output may differ between library versions; a scenario with the same
// seed must print the same figures everywhere.

#include <cstdint>
#include <string_view>

namespace affine::sim {

// splitmix64 step: also used to derive independent streams and flow hashes.
std::uint64_t mix64(std::uint64_t x) noexcept;

class rng {
 public:
  // Stream `stream` of the run seeded with `seed`: every client and every
  // server has its own stream, so the variants of a scenario draw the same
  // service and think times for the same request (common random numbers),
  // and a changed policy changes the outcome only through what it decides.
  rng(std::uint64_t seed, std::uint64_t stream) noexcept;
  std::uint64_t next() noexcept;
  double uniform() noexcept;  // [0, 1)

 private:
  std::uint64_t s_[4];
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
