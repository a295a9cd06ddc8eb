// The application's calls (RFC 9293 3.10: SEND, RECEIVE, CLOSE, ABORT).
// They change buffers and flags only; segments leave on the next output().

#include "stack/tcp/connection.hh"

#include <algorithm>

namespace affine::stack::tcp {

namespace {

// Why a send cannot be taken: the connection's error, else (RFC 9293 3.10.2)
// "error: connection closing".
std::unexpected<std::error_code> cannot_send(std::error_code error) {
  return std::unexpected(error ? error : std::make_error_code(std::errc::broken_pipe));
}

}  // namespace

std::expected<std::size_t, std::error_code> connection::send(std::span<const std::byte> data) {
  // RFC 9293 3.10.2: in SYN-SENT and SYN-RECEIVED the data is queued for
  // after the handshake.
  if (!writable_state()) return cannot_send(error_);
  const std::size_t n = snd_buf_.write(data);
  grow_send_buffer();  // after the write: `data` may lie in the ring (send_room)
  return n;
}

std::expected<std::size_t, std::error_code> connection::recv(std::span<std::byte> out) {
  if (rcv_buf_.empty() && error_) return std::unexpected(error_);
  const std::size_t n = rcv_buf_.read(out);
  note_taken(n);
  return n;
}

std::expected<std::span<const std::byte>, std::error_code> connection::recv_view() const {
  if (rcv_buf_.empty() && error_) return std::unexpected(error_);
  return rcv_buf_.contiguous_at(0, rcv_buf_.size());
}

void connection::consume(std::size_t n) {
  n = std::min(n, rcv_buf_.size());
  rcv_buf_.consume(n);
  note_taken(n);
}

std::expected<std::span<std::byte>, std::error_code> connection::send_room() {
  if (!writable_state()) return cannot_send(error_);
  grow_send_buffer();
  return snd_buf_.free_contiguous(snd_buf_.capacity());
}

void connection::shutdown_write() {
  if (fin_queued_) return;
  switch (state_) {
    case tcp_state::syn_sent:
    case tcp_state::syn_received:
      // RFC 9293 3.10.4: "queue for processing after entering ESTABLISHED".
      fin_queued_ = true;
      break;
    case tcp_state::established:
      // "Queue this until all preceding SENDs have been segmentized, then
      // form a FIN segment and send it. In any case, enter FIN-WAIT-1".
      fin_queued_ = true;
      state_ = tcp_state::fin_wait_1;
      break;
    case tcp_state::close_wait:
      // "Queue this request until all preceding SENDs have been
      // segmentized; then send a FIN segment, enter LAST-ACK state."
      fin_queued_ = true;
      state_ = tcp_state::last_ack;
      break;
    default:
      break;
  }
}

void connection::close(std::uint64_t now_ns) {
  now_ns = monotone_now(now_ns);
  if (state_ == tcp_state::closed) return;
  user_closed_ = true;
  // RFC 1122 4.2.2.13: closing with received data unread loses it: RST.
  // SO_LINGER with a zero timeout asks for the same.
  if (!rcv_buf_.empty() || cfg_.linger_ns == std::uint64_t{0}) {
    abort_with(rcv_buf_.empty() ? end_reason::aborted : end_reason::unread_data);
    return;
  }
  if (state_ == tcp_state::syn_sent) {
    // RFC 9293 3.10.4 SYN-SENT: "Delete the TCB".
    enter_closed({}, end_reason::orderly);
    return;
  }
  shutdown_write();
  if (state_ == tcp_state::fin_wait_2) timers_.close = now_ns + cfg_.fin_wait_2_timeout_ns;
  if (cfg_.linger_ns && state_ != tcp_state::time_wait) timers_.linger = now_ns + *cfg_.linger_ns;
}

void connection::abort() { abort_with(end_reason::aborted); }

void connection::abort_with(end_reason why) {
  // RFC 9293 3.10.5 ABORT: RST where the peer has a connection to reset;
  // queues flushed; CLOSED.
  switch (state_) {
    case tcp_state::syn_received:
    case tcp_state::established:
    case tcp_state::fin_wait_1:
    case tcp_state::fin_wait_2:
    case tcp_state::close_wait:
      rst_pending_ = true;
      break;
    default:
      break;
  }
  flush_buffers();
  if (state_ != tcp_state::closed) enter_closed({}, why);
}

}  // namespace affine::stack::tcp
