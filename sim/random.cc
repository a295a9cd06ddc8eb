// The generator and the distributions; see random.hh for why they are our own.

#include "sim/random.hh"

#include <cmath>
#include <numbers>

namespace affine::sim {

std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

rng::rng(std::uint64_t seed, std::uint64_t stream) noexcept {
  std::uint64_t x = mix64(seed) ^ mix64(stream + 0x632be59bd9b4e019ULL);
  for (auto& s : s_) s = x = mix64(x);
}

std::uint64_t rng::next() noexcept {
  const auto rotl = [](std::uint64_t v, int k) { return (v << k) | (v >> (64 - k)); };
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

double rng::uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::string_view to_string(dist_kind k) {
  switch (k) {
    case dist_kind::fixed: return "fixed";
    case dist_kind::exponential: return "exponential";
    case dist_kind::lognormal: return "lognormal";
  }
  return "unknown";
}

std::uint64_t distribution::sample(rng& r) const noexcept {
  const auto mean = static_cast<double>(mean_ns);
  switch (kind) {
    case dist_kind::fixed: return mean_ns;
    case dist_kind::exponential: return static_cast<std::uint64_t>(-mean * std::log1p(-r.uniform()));
    case dist_kind::lognormal: {
      // Parameters from the mean and cv: sigma^2 = ln(1 + cv^2), mu = ln(mean) - sigma^2 / 2.
      const double cv = cv_pct / 100.0;
      const double sigma2 = std::log1p(cv * cv);
      const double mu = std::log(mean) - sigma2 / 2;
      // Box-Muller; 1 - u keeps the logarithm finite.
      const double u1 = 1.0 - r.uniform();
      const double u2 = r.uniform();
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
      return static_cast<std::uint64_t>(std::exp(mu + std::sqrt(sigma2) * z));
    }
  }
  return mean_ns;
}

}  // namespace affine::sim
