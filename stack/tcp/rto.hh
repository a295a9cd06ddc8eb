#pragma once
// The retransmission timer's value, RFC 6298. Karn's rule is the caller's
// job: never sample a retransmitted segment unless timestamps make the
// sample unambiguous (RFC 6298 3).

#include <cstdint>

namespace affine::stack::tcp {

struct rto_config {
  std::uint64_t initial_ns = 1'000'000'000;  // RFC 6298 2.1: 1 second
  // RFC 6298 2.4 says 1 s; 200 ms is what deployed stacks use (Linux).
  std::uint64_t min_ns = 200'000'000;
  std::uint64_t max_ns = 60'000'000'000;     // RFC 6298 2.5: at least 60 s
  // G, the clock granularity: the reactor's timer wheel ticks every ~1 us.
  std::uint64_t granularity_ns = 1'000;
};

class rto_estimator {
 public:
  explicit rto_estimator(rto_config cfg = {});

  // A valid RTT measurement (RFC 6298 2.2 first, 2.3 later). Starts a new
  // RTO, so any backoff is dropped (RFC 6298 5.7, Karn's algorithm).
  void sample(std::uint64_t rtt_ns);
  // The current RTO including backoff, within [min_ns, max_ns].
  std::uint64_t rto_ns() const;
  // RFC 6298 5.5: the timer expired, double the RTO (bounded by max_ns).
  // backoff_count() counts every call, also past the bound.
  void backoff();
  void reset_backoff() { backoff_ = 0; }

  bool has_sample() const { return has_sample_; }
  std::uint64_t srtt_ns() const { return srtt_; }
  std::uint64_t rttvar_ns() const { return rttvar_; }
  unsigned backoff_count() const { return backoff_; }

 private:
  rto_config cfg_;
  std::uint64_t srtt_ = 0;
  std::uint64_t rttvar_ = 0;
  std::uint64_t base_ = 0;  // the RTO before backoff, already clamped
  unsigned backoff_ = 0;
  bool has_sample_ = false;
};

}  // namespace affine::stack::tcp
