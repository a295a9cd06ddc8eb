#pragma once
// HyStart++ (RFC 9406): slow start that leaves early when the round-trip
// time starts to rise, through a careful phase (Conservative Slow Start)
// that tells a real queue from jitter. Used in the initial slow start only
// (RFC 9406 4.3); after a loss ssthresh bounds slow start anyway.

#include <cstdint>

#include "stack/tcp/congestion.hh"

namespace affine::stack::tcp {

class hystart {
 public:
  // RFC 9406 4.3 constants.
  static constexpr std::uint64_t min_rtt_thresh_ns = 4'000'000;
  static constexpr std::uint64_t max_rtt_thresh_ns = 16'000'000;
  static constexpr std::uint64_t min_rtt_divisor = 8;
  static constexpr unsigned n_rtt_sample = 8;
  static constexpr unsigned css_growth_divisor = 4;
  static constexpr unsigned css_rounds = 5;
  // L for a sender without pacing (RFC 9406 4.2: L = 8).
  static constexpr std::uint64_t burst_limit_segments = 8;

  enum class phase : std::uint8_t { slow_start, conservative, done };

  void reset();
  // One ACK of new data below ssthresh: the bytes cwnd grows by. When it
  // returns with phase() == done the caller sets ssthresh = cwnd (RFC 9406
  // 4.2: "enter congestion avoidance by setting the ssthresh to the
  // current cwnd").
  std::uint64_t on_ack(const ack_sample& a, std::uint32_t mss);
  // A loss ends HyStart++ for good (RFC 9406 4.2: ssthresh is set by the loss).
  void on_loss() { phase_ = phase::done; }

  phase current() const { return phase_; }
  std::uint64_t css_baseline_ns() const { return css_baseline_ns_; }

 private:
  static constexpr std::uint64_t none = UINT64_MAX;

  void start_round(seq32 snd_max);

  phase phase_ = phase::slow_start;
  bool round_open_ = false;
  seq32 window_end_;  // RFC 9406 windowEnd: the round ends when it is acknowledged
  std::uint64_t last_round_min_ns_ = none;
  std::uint64_t current_round_min_ns_ = none;
  unsigned rtt_samples_ = 0;
  std::uint64_t css_baseline_ns_ = none;
  unsigned css_round_count_ = 0;
};

}  // namespace affine::stack::tcp
