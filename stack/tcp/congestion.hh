#pragma once
// Congestion control: the interface every algorithm implements, and NewReno
// (RFC 5681, RFC 6582, byte counting per RFC 3465).
//
// The connection owns loss detection (duplicate-ACK counting, the RFC 6582
// `recover` point, retransmission); the controller owns cwnd and ssthresh.
// All counts are bytes; windows never drop below 1 MSS and never overflow.

#include <cstdint>
#include <string_view>

namespace affine::stack::tcp {

class congestion_control {
 public:
  virtual ~congestion_control() = default;
  // RFC 5681 3.1 initial window, RFC 6928: min(10*MSS, max(2*MSS, 14600)).
  virtual void init(std::uint32_t mss, std::uint64_t now_ns) = 0;
  virtual std::uint32_t cwnd() const = 0;
  virtual std::uint32_t ssthresh() const = 0;
  // New data acknowledged outside recovery: slow start or congestion
  // avoidance (RFC 5681 3.1, RFC 3465 with L = 2*SMSS).
  virtual void on_ack(std::uint32_t bytes_acked, std::uint32_t flight_size, std::uint64_t now_ns) = 0;
  // Third duplicate ACK (RFC 5681 3.2 steps 2-3, RFC 6582 3.2 step 3).
  virtual void on_enter_recovery(std::uint32_t flight_size, std::uint64_t now_ns) = 0;
  // Each further duplicate ACK in recovery (RFC 6582 3.2 step 4).
  virtual void on_dup_ack_in_recovery() = 0;
  // Partial ACK in recovery (RFC 6582 3.2 step 5).
  virtual void on_partial_ack(std::uint32_t bytes_acked) = 0;
  // Full ACK ending recovery (RFC 6582 3.2 step 6); flight_size is the data
  // still outstanding after the ACK.
  virtual void on_exit_recovery(std::uint32_t flight_size) = 0;
  // Retransmission timeout (RFC 5681 3.1 eq. 4, loss window 1 MSS).
  virtual void on_timeout(std::uint32_t flight_size) = 0;
  // Sending again after an idle period longer than the RTO (RFC 5681 4.1).
  virtual void on_idle_restart(std::uint64_t now_ns) = 0;
  virtual std::string_view name() const = 0;
};

class new_reno final : public congestion_control {
 public:
  void init(std::uint32_t mss, std::uint64_t now_ns) override;
  std::uint32_t cwnd() const override { return cwnd_; }
  std::uint32_t ssthresh() const override { return ssthresh_; }
  void on_ack(std::uint32_t bytes_acked, std::uint32_t flight_size, std::uint64_t now_ns) override;
  void on_enter_recovery(std::uint32_t flight_size, std::uint64_t now_ns) override;
  void on_dup_ack_in_recovery() override;
  void on_partial_ack(std::uint32_t bytes_acked) override;
  void on_exit_recovery(std::uint32_t flight_size) override;
  void on_timeout(std::uint32_t flight_size) override;
  void on_idle_restart(std::uint64_t now_ns) override;
  std::string_view name() const override { return "newreno"; }

  std::uint32_t initial_window() const;

 private:
  // RFC 5681 3.1 eq. 4 / 3.2 eq. 4: ssthresh = max(FlightSize / 2, 2*SMSS).
  std::uint32_t half_flight(std::uint32_t flight_size) const;

  std::uint32_t mss_ = 1;
  std::uint32_t cwnd_ = 1;
  std::uint32_t ssthresh_ = UINT32_MAX;
  std::uint32_t acked_in_ca_ = 0;  // RFC 3465 2.1: bytes acked this cwnd
  // A timeout happened and no new data has been acknowledged since, so the
  // next timeout retransmits the same segment again (RFC 5681 3.1).
  bool timeout_unanswered_ = false;
};

}  // namespace affine::stack::tcp
