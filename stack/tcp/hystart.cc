#include "stack/tcp/hystart.hh"

#include <algorithm>

namespace affine::stack::tcp {

void hystart::reset() { *this = hystart{}; }

// RFC 9406 4.2: "At the start of each round during standard slow start and
// CSS, initialize the variables used to compute the last round's and
// current round's minimum RTT".
void hystart::start_round(seq32 snd_max) {
  round_open_ = true;
  window_end_ = snd_max;
  last_round_min_ns_ = current_round_min_ns_;
  current_round_min_ns_ = none;
  rtt_samples_ = 0;
}

std::uint64_t hystart::on_ack(const ack_sample& a, std::uint32_t mss) {
  // "cwnd = cwnd + min(N, L * SMSS)" in slow start; divided by
  // CSS_GROWTH_DIVISOR in CSS.
  const std::uint64_t growth = std::min(std::uint64_t{a.bytes_acked}, burst_limit_segments * mss);
  if (phase_ == phase::done) return std::min(std::uint64_t{a.bytes_acked}, 2 * std::uint64_t{mss});
  // The round ends with the first ACK past windowEnd (the one that covers it
  // exactly still times a segment of this round), as Linux's HyStart does.
  if (!round_open_ || a.ack > window_end_) {
    if (round_open_ && phase_ == phase::conservative && ++css_round_count_ >= css_rounds) {
      // "If CSS_ROUNDS rounds are complete, enter congestion avoidance".
      phase_ = phase::done;
      return 0;
    }
    start_round(a.snd_max);
  }
  // "Keep track of the minimum observed RTT": one sample per ACK that has one.
  if (a.rtt_ns != 0) {
    current_round_min_ns_ = std::min(current_round_min_ns_, a.rtt_ns);
    ++rtt_samples_;
  }
  const bool measured = rtt_samples_ >= n_rtt_sample && current_round_min_ns_ != none;
  if (phase_ == phase::slow_start) {
    if (measured && last_round_min_ns_ != none) {
      // "RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH))";
      // "if (currentRoundMinRTT >= (lastRoundMinRTT + RttThresh))" exit to CSS.
      const std::uint64_t thresh =
          std::max(min_rtt_thresh_ns, std::min(last_round_min_ns_ / min_rtt_divisor, max_rtt_thresh_ns));
      if (current_round_min_ns_ >= last_round_min_ns_ + thresh) {
        css_baseline_ns_ = current_round_min_ns_;
        css_round_count_ = 0;
        phase_ = phase::conservative;
        return growth / css_growth_divisor;
      }
    }
    return growth;
  }
  // CSS: "if (currentRoundMinRTT < cssBaselineMinRtt)" the exit was spurious:
  // "cssBaselineMinRtt = infinity; resume slow start including HyStart++".
  if (measured && current_round_min_ns_ < css_baseline_ns_) {
    css_baseline_ns_ = none;
    phase_ = phase::slow_start;
    return growth;
  }
  return growth / css_growth_divisor;
}

}  // namespace affine::stack::tcp
