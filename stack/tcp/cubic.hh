#pragma once
// CUBIC (RFC 9438): after a loss the window follows
//   W_cubic(t) = C * (t - K)^3 + W_max,  K = cbrt((W_max - cwnd_epoch) / C)
// (segments, seconds since the congestion-avoidance epoch began), concave
// up to the window of the last loss and convex past it, never below what
// Reno would have (the Reno-friendly W_est). Slow start is HyStart++.
// Windows are in segments of SMSS inside, in bytes outside.

#include "stack/tcp/congestion.hh"
#include "stack/tcp/hystart.hh"

namespace affine::stack::tcp {

class cubic final : public loss_based {
 public:
  // RFC 9438 5.1 and 4.6.
  static constexpr double c = 0.4;
  static constexpr double beta = 0.7;
  // RFC 9438 4.3: alpha_cubic = 3 * (1 - beta) / (1 + beta).
  static constexpr double alpha = 3 * (1 - beta) / (1 + beta);

  void init(std::uint32_t mss, std::uint64_t now_ns) override;
  void on_idle_restart(std::uint64_t now_ns) override;
  void on_send_from_empty(std::uint64_t now_ns, std::uint64_t quiet_ns) override;
  std::string_view name() const override { return "cubic"; }

  // The curve of the current epoch, for stats and tests.
  double w_max() const { return w_max_; }
  double k_seconds() const { return k_; }
  double w_est() const { return w_est_; }
  double w_cubic(double t_seconds) const;  // RFC 9438 eq. 1
  bool epoch_open() const { return epoch_open_; }
  std::uint64_t epoch_start_ns() const { return epoch_start_ns_; }
  const hystart& slow_start_state() const { return hystart_; }

 private:
  std::uint32_t reduced_ssthresh(std::uint32_t flight_size, loss kind) override;
  void slow_start(const ack_sample& a) override;
  void congestion_avoidance(const ack_sample& a) override;
  void begin_epoch(std::uint64_t now_ns);
  double segments() const { return double(cwnd_) / mss_; }

  hystart hystart_;
  double w_max_ = 0;        // segments: the window before the last reduction
  double k_ = 0;            // seconds
  double cwnd_prior_ = 0;   // segments: cwnd at the last congestion event
  double w_est_ = 0;        // segments: the Reno-friendly estimate
  double growth_credit_ = 0;  // bytes of growth not yet a whole byte of cwnd
  std::uint64_t epoch_start_ns_ = 0;
  bool epoch_open_ = false;
  bool after_timeout_ = false;  // RFC 9438 4.8: the first epoch after an RTO starts at K = 0
};

}  // namespace affine::stack::tcp
