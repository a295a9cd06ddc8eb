#pragma once
// The words a TCP connection reports in: its state (RFC 9293 3.3.2), why a
// segment was dropped (the stack counts drops by name), why it ended (the
// stack counts ends by name too), and the events that wake fibers.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace affine::stack::tcp {

// RFC 9293 3.3.2, Figure 5.
enum class tcp_state : std::uint8_t {
  closed,
  listen,
  syn_sent,
  syn_received,
  established,
  fin_wait_1,
  fin_wait_2,
  close_wait,
  closing,
  last_ack,
  time_wait,
};

std::string_view to_string(tcp_state s);

// Why input() discarded a segment. `none` when it was processed (even if only
// in part, e.g. data beyond the window trimmed away).
enum class drop_reason : std::uint8_t {
  none,
  closed,                  // RFC 9293 3.10.7.1: no connection (answered with RST unless RST)
  listen_rst,              // RFC 9293 3.10.7.2: RST to a listener, ignored
  listen_ack,              // RFC 9293 3.10.7.2: ACK to a listener, answered with RST
  listen_no_syn,           // RFC 9293 3.10.7.2: neither SYN, ACK nor RST
  syn_queue_full,          // listener's bound on SYN-RECEIVED connections
  accept_queue_full,       // listener's backlog: SYN dropped, or final ACK ignored
  syn_cookie_invalid,      // RFC 4987 3.6: an ACK to a listener whose cookie is forged or stale
  unacceptable_ack,        // RFC 9293 3.10.7.3 / 3.10.7.4: ACK outside SND.UNA..SND.NXT, RST sent
  syn_sent_no_syn,         // RFC 9293 3.10.7.3 fifth: neither SYN nor RST
  rst_unacceptable,        // RFC 9293 3.10.7.3 second / 3.10.7.4 first: RST not acknowledging or out of window
  paws,                    // RFC 7323 5.3 R1: TSval older than TS.Recent
  timestamp_missing,       // RFC 7323 3.2: TSopt negotiated but absent
  out_of_window,           // RFC 9293 3.10.7.4 first: sequence number not acceptable
  syn_in_window,           // RFC 9293 3.10.7.4 fourth: SYN in a synchronized state
  no_ack,                  // RFC 9293 3.10.7.4 fifth: ACK bit off
  ack_of_unsent,           // RFC 9293 3.10.7.4 fifth: SEG.ACK > SND.NXT, ACK sent
  data_after_close,        // RFC 1122 4.2.2.13: data for a closed application, RST sent
  rst_challenged,          // RFC 5961 3.2: RST in the window but not at RCV.NXT, challenge ACK
  syn_challenged,          // RFC 5961 4.2: SYN in a synchronized state, challenge ACK
  ack_too_old,             // RFC 5961 5.2: SEG.ACK < SND.UNA - MAX.SND.WND, challenge ACK
};

std::string_view to_string(drop_reason r);

// Why a connection reached CLOSED, as Linux counts it (its TCPAbortOn*,
// EstabResets and AttemptFails), one reason each; `open` until then.
enum class end_reason : std::uint8_t {
  open,
  orderly,           // both FINs (LAST-ACK, TIME-WAIT over), or closed before the SYN was answered
  handshake_failed,  // a passive SYN-RECEIVED ended: RST, SYN, or its SYN-ACKs unanswered
  refused,           // an active open met a RST or a hard ICMP error (ECONNREFUSED)
  reset_received,    // the peer's RST ended a synchronized connection (ECONNRESET)
  aborted,           // abort() (RFC 9293 3.10.5)
  unread_data,       // close() with received data unread: RST (RFC 1122 4.2.2.13; TCPAbortOnClose)
  data_after_close,  // data came after close(): RST (RFC 1122 4.2.2.13; TCPAbortOnData)
  linger,            // SO_LINGER ran out after close(): RST (TCPAbortOnLinger)
  retransmissions,   // R2 reached, SYN or data (RFC 1122 4.2.3.5; ETIMEDOUT)
  user_timeout,      // RFC 9293 3.10.8 (ETIMEDOUT)
  persist,           // zero-window probes unanswered (RFC 1122 4.2.2.17; ETIMEDOUT)
  orphan_probes,     // an orphan before a shut window, past max_orphan_probes: RST
  keepalive,         // keepalive probes unanswered (RFC 1122 4.2.3.6): RST
  fin_wait_2,        // FIN-WAIT-2 after close() ran out (Linux's tcp_fin_timeout)
};
inline constexpr std::size_t end_reason_count = std::size_t(end_reason::fin_wait_2) + 1;

std::string_view to_string(end_reason r);

// What changed, for whoever wakes fibers: read with connection::take_events().
enum class event : std::uint8_t {
  readable = 1u << 0,      // data, end of stream or an error to read
  writable = 1u << 1,      // send buffer space, or an error to report
  connected = 1u << 2,     // reached ESTABLISHED
  closed = 1u << 3,        // reached CLOSED (done, reset or timed out)
  accept_ready = 1u << 4,  // entered its listener's accept queue
  counted = 1u << 5,       // a connection_stats counter moved (connection::count)
};

class event_set {
 public:
  constexpr event_set() = default;
  constexpr bool has(event e) const { return (bits_ & std::uint8_t(e)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr void add(event e) { bits_ |= std::uint8_t(e); }
  constexpr std::uint8_t bits() const { return bits_; }
  friend constexpr bool operator==(event_set, event_set) = default;

 private:
  std::uint8_t bits_ = 0;
};

}  // namespace affine::stack::tcp
