// Pacing (tcp.pacing; Linux's internal pacing, tcp_update_pacing_rate and
// tcp_pacing_check, or the fq qdisc it hands its rate to). Without it a
// window leaves as fast as ACKs release it: a flight of a whole window
// at line rate, which a shallow queue on the path drops the tail of. With
// it the data of a window is spread over the round trip.
//
// The rate is the window per smoothed RTT, times 2 while the window is
// under half of ssthresh (slow start: it must keep up with a window that
// doubles) and 1.2 after (a little faster than the ACK clock, so that
// pacing never keeps the window from filling), over the larger of cwnd
// and the flight, as Linux's sysctl_tcp_pacing_ss_ratio and _ca_ratio.
// None before the first RTT sample, and not for the first ten data
// segments (Linux: data_segs_out >= 10): the initial window leaves at once.
//
// Each segment moves the time the next may leave by len / rate. The
// segments go in bursts: while that time is within a millisecond of now,
// at most 64 KiB's time and at least two segments', as Linux's TSO
// autosizing sends a millisecond of its rate at once (sk_pacing_shift 10)
// in one GSO packet of at most 64 KiB (tcp_tso_autosize). Held, the
// connection waits on timers_.pace for the time the rate lets the next go,
// and then sends the next millisecond. Time left unused is saved up to
// one burst: after a quiet spell, two leave at once. Only data the ACK
// clock releases is paced (output_data's loop, new data and what a
// timeout resends); a fast retransmission and SACK recovery (PRR spreads
// it by the ACKs) are not. On a LAN a window is less than a millisecond
// of its own rate, and pacing holds nothing.

#include <algorithm>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

namespace {

constexpr std::uint64_t burst_ns = 1'000'000;  // a millisecond of the rate at once,
constexpr std::uint64_t burst_bytes = 65'536;   // but no more than this
constexpr std::uint8_t unpaced_segments = 10;
constexpr std::uint64_t ss_ratio_percent = 200, ca_ratio_percent = 120;
constexpr std::uint64_t ns_per_s = 1'000'000'000;

// How far ahead of now the next send time may be for a segment to leave.
std::uint64_t burst_at(std::uint64_t rate, std::uint32_t mss) {
  return std::max(std::min(burst_ns, burst_bytes * ns_per_s / rate), 2 * std::uint64_t{mss} * ns_per_s / rate);
}

}  // namespace

std::uint64_t connection::pacing_rate() const {
  if (!cfg_.pacing || !rto_.has_sample() || rto_.srtt_ns() == 0) return 0;
  const std::uint32_t cwnd = cc_->cwnd();
  const std::uint64_t ratio = cwnd < cc_->ssthresh() / 2 ? ss_ratio_percent : ca_ratio_percent;
  const std::uint64_t window = std::max<std::uint64_t>(cwnd, std::uint32_t(snd_nxt_ - snd_una_));
  // window * 1e9 stays inside 64 bits (a window under 2^32).
  return std::max<std::uint64_t>(1, window * ns_per_s / rto_.srtt_ns() * ratio / 100);
}

bool connection::pacing_holds(std::uint64_t now_ns) {
  if (!cfg_.pacing || data_segments_out_ < unpaced_segments) return false;
  const std::uint64_t rate = pacing_rate();
  if (rate == 0) return false;
  if (pace_next_ns_ <= now_ns + burst_at(rate, eff_mss_)) return false;
  timers_.pace = pace_next_ns_;
  count(&connection_stats::pacing_holds);
  return true;
}

void connection::note_paced(std::uint32_t len, std::uint64_t now_ns) {
  if (!cfg_.pacing) return;
  timers_.pace = no_deadline;  // sending: an earlier hold's wakeup is not needed
  if (data_segments_out_ < unpaced_segments) {
    ++data_segments_out_;
    return;
  }
  const std::uint64_t rate = pacing_rate();
  if (rate == 0) return;
  // Time not used is saved up to one burst (Linux's credit in
  // tcp_update_skb_after_send): after a quiet spell two bursts leave at
  // once, so that a response of up to two bursts is not held.
  const std::uint64_t credit = std::min(now_ns, burst_at(rate, eff_mss_));
  pace_next_ns_ = std::max(pace_next_ns_, now_ns - credit) + std::uint64_t{len} * ns_per_s / rate;
}

}  // namespace affine::stack::tcp
