// Whether the congestion window is what limits sending (RFC 9438 5.8,
// RFC 7661). A window that grows on every ACK while the application sends
// less than it allows (a request/response server, a paced stream) ends far
// above anything the path was shown to carry, and the next large write
// leaves as one burst of that size. It grows only while it was full in the
// last round trip, or, in slow start, up to twice the largest flight of
// that round (as Linux's tcp_is_cwnd_limited and tcp_cwnd_validate).

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

// After each pass that sends new data.
void connection::note_cwnd_use() {
  const auto flight = std::uint32_t(snd_nxt_ - snd_una_);
  // Full: another full-sized segment would not fit.
  const bool limited = std::uint64_t{flight} + eff_mss_ > cc_->cwnd();
  // A round ends once SND.UNA passes where it began; a full window, or a
  // larger flight while not full, carries the verdict on into a new one.
  if (snd_una_ >= cwnd_use_.end || limited || (!cwnd_use_.limited && flight > cwnd_use_.max_flight)) {
    cwnd_use_.limited = limited;
    cwnd_use_.max_flight = flight;
    cwnd_use_.end = snd_nxt_;
  }
}

bool connection::cwnd_limited() const {
  if (cwnd_use_.limited) return true;
  const std::uint32_t cwnd = cc_->cwnd();
  return cwnd < cc_->ssthresh() && cwnd < 2 * std::uint64_t{cwnd_use_.max_flight};
}

}  // namespace affine::stack::tcp
