// The generator and the distributions; see random.hh for why they are our own.

#include "sim/random.hh"

#include <cmath>
#include <numbers>

namespace affine::sim {

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
