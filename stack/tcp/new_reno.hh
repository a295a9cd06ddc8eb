#pragma once
// NewReno (RFC 5681, RFC 6582): halve on loss, one segment per window in
// congestion avoidance, counted in bytes (RFC 3465).

#include "stack/tcp/congestion.hh"

namespace affine::stack::tcp {

class new_reno final : public loss_based {
 public:
  std::string_view name() const override { return "newreno"; }

 private:
  // RFC 5681 3.1 eq. 4 / 3.2 eq. 4: ssthresh = max(FlightSize / 2, 2*SMSS).
  std::uint32_t reduced_ssthresh(std::uint32_t flight_size, loss) override { return flight_size / 2; }
  void congestion_avoidance(const ack_sample& a) override;
  // RFC 3465 2.1: bytes_acked is reset when cwnd is reduced.
  void on_window_set() override { acked_in_ca_ = 0; }

  std::uint32_t acked_in_ca_ = 0;  // RFC 3465 2.1: bytes acked this cwnd
};

}  // namespace affine::stack::tcp
