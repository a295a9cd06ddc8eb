// A SYN for a connection in TIME-WAIT (RFC 9293 3.6.1 MAY-2, from RFC
// 1122 4.2.2.13, and RFC 6191). TIME-WAIT holds the four-tuple so that no
// old duplicate of this incarnation is taken by the next. A client that
// comes back on the same port before 2 MSL are over (one that cycles
// through its ephemeral ports faster than that) would otherwise draw an
// ACK, answer it with a RST and try again a retransmission timeout later:
// a second's stall per connection. Where the SYN is surely newer than
// anything of the old incarnation, the next one opens at once instead.

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

std::optional<seq32> connection::reopen_iss(const tcp_segment& syn) const {
  if (state_ != tcp_state::time_wait || syn.control != tcp_control::syn || syn.ack) return std::nullopt;
  const std::optional<tcp_timestamps>& ts = syn.options.timestamps;
  bool newer = false;
  if (ts_ok_ && ts && cfg_.timestamps) {
    // RFC 6191 2: both incarnations timestamp: a TSval newer than the last
    // one seen, or the same one and a sequence number past the last seen.
    const auto age = std::int32_t(ts->value - ts_recent_);
    newer = age > 0 || (age == 0 && syn.seq > rcv_nxt_);
  } else {
    // RFC 1122 4.2.2.13 (and RFC 6191 2 where only one side timestamps):
    // a sequence number past the last one seen.
    newer = syn.seq > rcv_nxt_;
  }
  if (!newer) return std::nullopt;
  // RFC 1122 4.2.2.13 (1): an ISS past every sequence number the last
  // incarnation used, here by more than an unscaled window (as Linux's
  // tcp_timewait_state_process), so nothing of ours still in flight from
  // it can fall in the new window.
  return snd_max_ + 65537;
}

}  // namespace affine::stack::tcp
