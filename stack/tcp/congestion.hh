#pragma once
// Congestion control: the interface every algorithm implements, and the
// window arithmetic the loss-based ones share (the initial window, slow
// start, the recovery window of RFC 5681 3.2 / RFC 6582 3.2). The
// algorithms: NewReno (new_reno.hh) and CUBIC with HyStart++ (cubic.hh).
//
// The connection owns loss detection (duplicate-ACK counting, the RFC 6582
// `recover` point, retransmission); the controller owns cwnd and ssthresh.
// All counts are bytes; windows never drop below 1 MSS and never overflow.

#include <cstdint>
#include <memory>
#include <string_view>

#include "stack/tcp/config.hh"
#include "stack/wire/seq32.hh"

namespace affine::stack::tcp {

// What an ACK of new data tells the controller.
struct ack_sample {
  std::uint32_t bytes_acked = 0;
  std::uint32_t flight_size = 0;  // outstanding before this ACK
  std::uint64_t now_ns = 0;
  std::uint64_t rtt_ns = 0;   // this ACK's RTT measurement (RFC 6298 / RFC 7323 4.1); 0 = none
  std::uint64_t srtt_ns = 0;  // RFC 6298 SRTT after it; 0 = none yet
  seq32 ack{};                // SEG.ACK
  seq32 snd_max{};            // the highest sequence number sent (rounds end there)
  // RFC 9438 5.8, RFC 7661: the window was what limited sending of late
  // (connection::cwnd_limited); the window grows only then.
  bool cwnd_limited = true;
};

class congestion_control {
 public:
  virtual ~congestion_control() = default;
  // RFC 5681 3.1 initial window, RFC 6928: min(10*MSS, max(2*MSS, 14600)).
  virtual void init(std::uint32_t mss, std::uint64_t now_ns) = 0;
  virtual std::uint32_t cwnd() const = 0;
  virtual std::uint32_t ssthresh() const = 0;
  // New data acknowledged outside recovery: slow start or congestion avoidance.
  virtual void on_ack(const ack_sample& a) = 0;
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
  // An ECN echo (RFC 3168 6.1.2): the reduction a loss would bring, cwnd =
  // ssthresh, nothing to resend (RFC 9438 4.6 for CUBIC).
  virtual void on_ecn_echo(std::uint32_t flight_size, std::uint64_t now_ns) = 0;
  // Sending again after an idle period longer than the RTO (RFC 5681 4.1).
  virtual void on_idle_restart(std::uint64_t now_ns) = 0;
  // New data leaves with nothing in flight, `quiet_ns` after the last data
  // sent: the application had nothing to send meanwhile (Linux's
  // CA_EVENT_TX_START).
  virtual void on_send_from_empty(std::uint64_t now_ns, std::uint64_t quiet_ns) = 0;
  // A reduction (recovery or timeout) was spurious (undo.cc): the window it
  // took is given back, cwnd and ssthresh as they were before it (RFC 4015
  // 2), never less than they are now.
  virtual void on_undo(std::uint32_t prior_cwnd, std::uint32_t prior_ssthresh) = 0;
  virtual std::string_view name() const = 0;
};

std::unique_ptr<congestion_control> make_congestion_control(congestion_algorithm a);

// The loss-based controllers' shared window arithmetic. An algorithm says
// how far a loss reduces ssthresh and how the window grows past it; the
// recovery window (inflation per duplicate ACK, deflation per partial ACK,
// the exit, the loss window after a timeout) is RFC 5681 / RFC 6582's for all.
class loss_based : public congestion_control {
 public:
  void init(std::uint32_t mss, std::uint64_t now_ns) override;
  std::uint32_t cwnd() const final { return cwnd_; }
  std::uint32_t ssthresh() const final { return ssthresh_; }
  void on_ack(const ack_sample& a) final;
  void on_enter_recovery(std::uint32_t flight_size, std::uint64_t now_ns) final;
  void on_dup_ack_in_recovery() final;
  void on_partial_ack(std::uint32_t bytes_acked) final;
  void on_exit_recovery(std::uint32_t flight_size) final;
  void on_timeout(std::uint32_t flight_size) final;
  void on_ecn_echo(std::uint32_t flight_size, std::uint64_t now_ns) final;
  void on_idle_restart(std::uint64_t now_ns) override;
  void on_send_from_empty(std::uint64_t, std::uint64_t) override {}
  void on_undo(std::uint32_t prior_cwnd, std::uint32_t prior_ssthresh) final;

  std::uint32_t initial_window() const;

 protected:
  enum class loss { fast_retransmit, timeout };
  // The multiplicative decrease: the ssthresh after a loss event.
  virtual std::uint32_t reduced_ssthresh(std::uint32_t flight_size, loss kind) = 0;
  // Growth below ssthresh; by default RFC 5681 3.1 counted in bytes
  // (RFC 3465 2.2): cwnd += min(N, L) with L = 2*SMSS.
  virtual void slow_start(const ack_sample& a);
  // Growth at or above ssthresh.
  virtual void congestion_avoidance(const ack_sample& a) = 0;
  // cwnd was just set by recovery or a timeout: per-window counts restart.
  virtual void on_window_set() {}

  void add_to_cwnd(std::uint64_t bytes);

  std::uint32_t mss_ = 1;
  std::uint32_t cwnd_ = 1;
  std::uint32_t ssthresh_ = UINT32_MAX;

 private:
  // A timeout happened and no new data has been acknowledged since, so the
  // next timeout retransmits the same segment again (RFC 5681 3.1).
  bool timeout_unanswered_ = false;
};

// Window arithmetic is done in 64 bits and saturates at 2^32 - 1.
inline std::uint32_t saturate_window(std::uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : std::uint32_t(v); }

}  // namespace affine::stack::tcp
