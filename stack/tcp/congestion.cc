#include "stack/tcp/congestion.hh"

#include <algorithm>
#include <limits>

namespace affine::stack::tcp {

namespace {

constexpr std::uint64_t k_max = std::numeric_limits<std::uint32_t>::max();

// Window arithmetic is done in 64 bits and saturates at 2^32 - 1.
std::uint32_t saturate(std::uint64_t v) { return std::uint32_t(std::min(v, k_max)); }

}  // namespace

std::uint32_t new_reno::initial_window() const {
  // RFC 6928 2 (which RFC 5681 3.1 allows): IW = min(10*MSS, max(2*MSS, 14600)).
  const std::uint64_t mss = mss_;
  return saturate(std::min(10 * mss, std::max(2 * mss, std::uint64_t{14600})));
}

std::uint32_t new_reno::half_flight(std::uint32_t flight_size) const {
  return saturate(std::max(std::uint64_t{flight_size} / 2, 2 * std::uint64_t{mss_}));
}

void new_reno::init(std::uint32_t mss, std::uint64_t) {
  mss_ = std::max(mss, std::uint32_t{1});
  cwnd_ = initial_window();
  // RFC 5681 3.1: the initial ssthresh SHOULD be set arbitrarily high.
  ssthresh_ = std::numeric_limits<std::uint32_t>::max();
  acked_in_ca_ = 0;
  timeout_unanswered_ = false;
}

void new_reno::on_ack(std::uint32_t bytes_acked, std::uint32_t, std::uint64_t) {
  timeout_unanswered_ = false;
  if (cwnd_ < ssthresh_) {
    // RFC 5681 3.1 slow start, counted in bytes (RFC 3465 2.2):
    // cwnd += min(N, L) with L = 2*SMSS.
    cwnd_ = saturate(std::uint64_t{cwnd_} + std::min(std::uint64_t{bytes_acked}, 2 * std::uint64_t{mss_}));
    return;
  }
  // RFC 5681 3.1 congestion avoidance, by byte counting (RFC 3465 2.1): once
  // the bytes acknowledged reach cwnd, take cwnd off the count and add SMSS.
  acked_in_ca_ = saturate(std::uint64_t{acked_in_ca_} + bytes_acked);
  if (acked_in_ca_ >= cwnd_) {
    acked_in_ca_ -= cwnd_;
    cwnd_ = saturate(std::uint64_t{cwnd_} + mss_);
  }
}

void new_reno::on_enter_recovery(std::uint32_t flight_size, std::uint64_t) {
  // RFC 5681 3.2 step 2 / RFC 6582 3.2 step 3: ssthresh = max(FlightSize/2, 2*SMSS).
  ssthresh_ = half_flight(flight_size);
  // RFC 5681 3.2 step 3 / RFC 6582 3.2 step 3: cwnd = ssthresh + 3*SMSS,
  // inflated by the three segments that left the network.
  cwnd_ = saturate(std::uint64_t{ssthresh_} + 3 * std::uint64_t{mss_});
  acked_in_ca_ = 0;
}

void new_reno::on_dup_ack_in_recovery() {
  // RFC 5681 3.2 step 4 / RFC 6582 3.2 step 4: cwnd += SMSS per further duplicate ACK.
  cwnd_ = saturate(std::uint64_t{cwnd_} + mss_);
}

void new_reno::on_partial_ack(std::uint32_t bytes_acked) {
  timeout_unanswered_ = false;
  // RFC 6582 3.2 step 5: deflate cwnd by the new data acknowledged ...
  std::uint64_t cwnd = bytes_acked < cwnd_ ? cwnd_ - bytes_acked : 0;
  // ... and add back SMSS if at least SMSS of new data was acknowledged.
  if (bytes_acked >= mss_) cwnd += mss_;
  cwnd_ = saturate(std::max(cwnd, std::uint64_t{mss_}));
}

void new_reno::on_exit_recovery(std::uint32_t flight_size) {
  timeout_unanswered_ = false;
  // RFC 6582 3.2 step 6, option 1: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS),
  // which avoids a burst when little data is outstanding.
  const std::uint64_t mss = mss_;
  cwnd_ = saturate(std::min(std::uint64_t{ssthresh_}, std::max(std::uint64_t{flight_size}, mss) + mss));
  acked_in_ca_ = 0;
}

void new_reno::on_timeout(std::uint32_t flight_size) {
  // RFC 5681 3.1: when the segment has already been retransmitted by the
  // timer (no new data acknowledged since the last timeout), ssthresh is
  // held constant; otherwise eq. 4: ssthresh = max(FlightSize/2, 2*SMSS).
  if (!timeout_unanswered_) ssthresh_ = half_flight(flight_size);
  // RFC 5681 3.1: cwnd = LW, the loss window of one full-sized segment.
  cwnd_ = mss_;
  // RFC 3465 2.1: bytes_acked is reset when cwnd is reduced by a timeout.
  acked_in_ca_ = 0;
  timeout_unanswered_ = true;
}

void new_reno::on_idle_restart(std::uint64_t) {
  // RFC 5681 4.1: cwnd = min(cwnd, RW), RW = min(IW, cwnd).
  cwnd_ = std::min(cwnd_, initial_window());
}

}  // namespace affine::stack::tcp
