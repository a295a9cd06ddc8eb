#include "stack/tcp/congestion.hh"

#include <algorithm>

#include "stack/tcp/cubic.hh"
#include "stack/tcp/new_reno.hh"

namespace affine::stack::tcp {

std::unique_ptr<congestion_control> make_congestion_control(congestion_algorithm a) {
  switch (a) {
    case congestion_algorithm::new_reno:
      return std::make_unique<new_reno>();
    case congestion_algorithm::cubic:
      break;
  }
  return std::make_unique<cubic>();
}

std::uint32_t loss_based::initial_window() const {
  // RFC 6928 2 (which RFC 5681 3.1 allows): IW = min(10*MSS, max(2*MSS, 14600)).
  const std::uint64_t mss = mss_;
  return saturate_window(std::min(10 * mss, std::max(2 * mss, std::uint64_t{14600})));
}

void loss_based::add_to_cwnd(std::uint64_t bytes) { cwnd_ = saturate_window(std::uint64_t{cwnd_} + bytes); }

void loss_based::init(std::uint32_t mss, std::uint64_t) {
  mss_ = std::max(mss, std::uint32_t{1});
  cwnd_ = initial_window();
  // RFC 5681 3.1: the initial ssthresh SHOULD be set arbitrarily high.
  ssthresh_ = UINT32_MAX;
  timeout_unanswered_ = false;
}

void loss_based::on_ack(const ack_sample& a) {
  timeout_unanswered_ = false;
  if (!a.cwnd_limited) return;
  if (cwnd_ < ssthresh_) {
    slow_start(a);
  } else {
    congestion_avoidance(a);
  }
}

void loss_based::slow_start(const ack_sample& a) {
  // RFC 5681 3.1 slow start, counted in bytes (RFC 3465 2.2): cwnd += min(N, L), L = 2*SMSS.
  add_to_cwnd(std::min(std::uint64_t{a.bytes_acked}, 2 * std::uint64_t{mss_}));
}

void loss_based::on_enter_recovery(std::uint32_t flight_size, std::uint64_t) {
  // RFC 5681 3.2 step 2 / RFC 6582 3.2 step 3: the algorithm's reduction ...
  ssthresh_ = std::max(reduced_ssthresh(flight_size, loss::fast_retransmit), 2 * mss_);
  // ... then RFC 5681 3.2 step 3: cwnd = ssthresh + 3*SMSS, inflated by the
  // three segments that left the network.
  cwnd_ = saturate_window(std::uint64_t{ssthresh_} + 3 * std::uint64_t{mss_});
  on_window_set();
}

void loss_based::on_dup_ack_in_recovery() {
  // RFC 5681 3.2 step 4 / RFC 6582 3.2 step 4: cwnd += SMSS per further duplicate ACK.
  add_to_cwnd(mss_);
}

void loss_based::on_partial_ack(std::uint32_t bytes_acked) {
  timeout_unanswered_ = false;
  // RFC 6582 3.2 step 5: deflate cwnd by the new data acknowledged ...
  std::uint64_t cwnd = bytes_acked < cwnd_ ? cwnd_ - bytes_acked : 0;
  // ... and add back SMSS if at least SMSS of new data was acknowledged.
  if (bytes_acked >= mss_) cwnd += mss_;
  cwnd_ = saturate_window(std::max(cwnd, std::uint64_t{mss_}));
}

void loss_based::on_exit_recovery(std::uint32_t flight_size) {
  timeout_unanswered_ = false;
  // RFC 6582 3.2 step 6, option 1: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS),
  // which avoids a burst when little data is outstanding.
  const std::uint64_t mss = mss_;
  cwnd_ = saturate_window(std::min(std::uint64_t{ssthresh_}, std::max(std::uint64_t{flight_size}, mss) + mss));
  on_window_set();
}

void loss_based::on_timeout(std::uint32_t flight_size) {
  // RFC 5681 3.1: when the segment has already been retransmitted by the
  // timer (no new data acknowledged since the last timeout), ssthresh is
  // held constant; otherwise the algorithm's reduction.
  if (!timeout_unanswered_) ssthresh_ = std::max(reduced_ssthresh(flight_size, loss::timeout), 2 * mss_);
  // RFC 5681 3.1: cwnd = LW, the loss window of one full-sized segment.
  cwnd_ = mss_;
  timeout_unanswered_ = true;
  on_window_set();
}

void loss_based::on_ecn_echo(std::uint32_t flight_size, std::uint64_t) {
  // RFC 3168 6.1.2: ssthresh as after a loss, and cwnd down to it at once
  // (no recovery inflation: nothing left the network to be resent).
  ssthresh_ = std::max(reduced_ssthresh(flight_size, loss::fast_retransmit), 2 * mss_);
  cwnd_ = ssthresh_;
  on_window_set();
}

// Linux's tcp_undo_cwnd_reduction: never below what the window is now.
void loss_based::on_undo(std::uint32_t prior_cwnd, std::uint32_t prior_ssthresh) {
  timeout_unanswered_ = false;
  cwnd_ = std::max(cwnd_, prior_cwnd);
  ssthresh_ = std::max(ssthresh_, prior_ssthresh);
  on_window_set();
}

void loss_based::on_idle_restart(std::uint64_t) {
  // RFC 5681 4.1: cwnd = min(cwnd, RW), RW = min(IW, cwnd).
  cwnd_ = std::min(cwnd_, initial_window());
}

}  // namespace affine::stack::tcp
