#include "stack/tcp/new_reno.hh"

namespace affine::stack::tcp {

void new_reno::congestion_avoidance(const ack_sample& a) {
  // RFC 5681 3.1 congestion avoidance, by byte counting (RFC 3465 2.1): once
  // the bytes acknowledged reach cwnd, take cwnd off the count and add SMSS.
  acked_in_ca_ = saturate_window(std::uint64_t{acked_in_ca_} + a.bytes_acked);
  if (acked_in_ca_ >= cwnd_) {
    acked_in_ca_ -= cwnd_;
    add_to_cwnd(mss_);
  }
}

}  // namespace affine::stack::tcp
