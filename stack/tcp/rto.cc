#include "stack/tcp/rto.hh"

#include <algorithm>
#include <limits>

namespace affine::stack::tcp {

namespace {

constexpr std::uint64_t k_max = std::numeric_limits<std::uint64_t>::max();

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return b > k_max - a ? k_max : a + b; }

// |a - b| without underflow.
std::uint64_t distance(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : b - a; }

}  // namespace

rto_estimator::rto_estimator(rto_config cfg) : cfg_(cfg) {
  // A maximum below the minimum would make every clamp ill-formed.
  cfg_.max_ns = std::max(cfg_.min_ns, cfg_.max_ns);
  base_ = std::clamp(cfg_.initial_ns, cfg_.min_ns, cfg_.max_ns);
}

void rto_estimator::sample(std::uint64_t rtt_ns) {
  if (!has_sample_) {
    // RFC 6298 2.2: SRTT <- R, RTTVAR <- R/2.
    srtt_ = rtt_ns;
    rttvar_ = rtt_ns / 2;
    has_sample_ = true;
  } else {
    // RFC 6298 2.3, alpha = 1/8, beta = 1/4; RTTVAR is updated first, with
    // the old SRTT. Written as x - x/4 + d/4 so that nothing overflows.
    rttvar_ = rttvar_ - rttvar_ / 4 + distance(srtt_, rtt_ns) / 4;
    srtt_ = srtt_ - srtt_ / 8 + rtt_ns / 8;
  }
  // RFC 6298 2.2/2.3: RTO <- SRTT + max(G, K*RTTVAR), K = 4.
  const std::uint64_t k_rttvar = rttvar_ > k_max / 4 ? k_max : 4 * rttvar_;
  const std::uint64_t rto = saturating_add(srtt_, std::max(cfg_.granularity_ns, k_rttvar));
  // RFC 6298 2.4 (minimum) and 2.5 (maximum).
  base_ = std::clamp(rto, cfg_.min_ns, cfg_.max_ns);
  // RFC 6298 5.7 / Karn: a valid sample ends the backed-off RTO.
  backoff_ = 0;
}

std::uint64_t rto_estimator::rto_ns() const {
  // base_ << backoff_, bounded by the maximum (RFC 6298 5.5, 2.5).
  if (backoff_ >= 64 || base_ > (cfg_.max_ns >> backoff_)) return cfg_.max_ns;
  return base_ << backoff_;
}

void rto_estimator::backoff() {
  // RFC 6298 5.5: RTO <- RTO * 2; rto_ns() applies the bound (2.5). The
  // count keeps counting expiries, which the caller may limit.
  if (backoff_ < std::numeric_limits<unsigned>::max()) ++backoff_;
}

}  // namespace affine::stack::tcp
