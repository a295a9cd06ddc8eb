#pragma once
// A connection's settings. Defaults follow Linux where the RFCs leave the
// value open; tests shrink the durations.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "stack/tcp/rto.hh"

namespace affine::stack::tcp {

// RFC 1122 4.2.3.6: off by default; the idle time MUST default to no less
// than two hours.
struct keepalive_config {
  bool enabled = false;
  std::uint64_t idle_ns = 7'200'000'000'000;   // silence before the first probe
  std::uint64_t interval_ns = 75'000'000'000;  // between unanswered probes
  unsigned count = 9;                          // unanswered probes before ETIMEDOUT
};

// RFC 9438 CUBIC (with RFC 9406 HyStart++) as Linux has it by default;
// RFC 5681 / RFC 6582 NewReno on request.
enum class congestion_algorithm : std::uint8_t { cubic, new_reno };

// RFC 3168 ECN: taken when the peer's SYN asks (passive, Linux's
// tcp_ecn = 2), asked for on an active open too (on), or never (off).
enum class ecn_mode : std::uint8_t { passive, on, off };

struct connection_config {
  // The MSS we advertise (RFC 9293 3.7.1): what our interface can receive,
  // and the upper bound of what we send.
  std::uint16_t mss = 1460;
  std::size_t send_buffer = 256 * 1024;
  std::size_t recv_buffer = 256 * 1024;
  // The receive buffer grows from recv_buffer up to this while the
  // application takes more each round trip than the window lets in
  // (buffer_tuning.cc; Linux's tcp_rmem[2] and tcp_moderate_rcvbuf); at or
  // below recv_buffer it stays as it is (SO_RCVBUF set, as Linux). The
  // window scale is chosen for it.
  std::size_t recv_buffer_max = 6 * 1024 * 1024;
  // The send buffer grows from send_buffer up to this while it, not the
  // congestion or peer's window, is what limits sending (Linux's
  // tcp_wmem[2] and tcp_sndbuf_expand); at or below send_buffer it stays
  // as it is (SO_SNDBUF set).
  std::size_t send_buffer_max = 4 * 1024 * 1024;
  // Growth stops while the rings of every connection of the process hold
  // this many bytes or more (ring_buffer::allocated_bytes(); Linux's
  // tcp_mem); 0: no bound but the two maxima.
  std::size_t buffer_memory_limit = 0;
  bool window_scaling = true;  // RFC 7323 2
  bool timestamps = true;      // RFC 7323 3
  bool sack = true;            // RFC 2018: offered, and SACK blocks reported when both SYNs had it
  // pacing.cc: data leaves at twice (slow start) or 1.2 times (after) the
  // window per smoothed RTT, in bursts of a millisecond of that rate, as
  // Linux's internal pacing (or fq) spreads it; false: as the ACKs clock it.
  bool pacing = false;
  ecn_mode ecn = ecn_mode::passive;
  rto_config rto;
  congestion_algorithm congestion = congestion_algorithm::cubic;
  // RFC 1122 4.2.3.2: an ACK is delayed less than 0.5 s; Linux uses 40 ms.
  std::uint64_t delayed_ack_ns = 40'000'000;
  // RFC 9293 3.3.2: TIME-WAIT lasts 2*MSL; Linux uses 60 s.
  std::uint64_t time_wait_ns = 60'000'000'000;
  // After close() the application cannot read; a peer that never sends its
  // FIN would hold FIN-WAIT-2 forever (Linux tcp_fin_timeout).
  std::uint64_t fin_wait_2_timeout_ns = 60'000'000'000;
  keepalive_config keepalive;
  // RFC 1122 4.2.3.5 R2 for data (Linux tcp_retries2) and for SYN / SYN-ACK
  // (Linux tcp_syn_retries, tcp_synack_retries).
  unsigned max_retransmissions = 15;
  unsigned max_syn_retransmissions = 6;
  unsigned max_synack_retransmissions = 5;
  // An orphan (closed by the application, data still queued) before a zero
  // window: the probes it sends, answered or not, before it resets the
  // connection (Linux's tcp_orphan_retries, whose 0 means 8). RFC 1122
  // 4.2.2.17's probing "indefinitely" is for an application to wait on;
  // with none left, a peer answering every probe with a zero window would
  // hold the connection for ever (a connection-table exhaustion).
  unsigned max_orphan_probes = 8;
  // RFC 9293 3.10.8 USER TIMEOUT (Linux's TCP_USER_TIMEOUT); 0: none.
  // Otherwise the connection ends with ETIMEDOUT once its oldest
  // unacknowledged data (or SYN) has waited this long without an ACK that
  // moves SND.UNA, once its queued data has waited this long before a shut
  // window (answered probes or not), or once keepalive has probed and
  // nothing came for this long. For data and keepalive it takes the place of
  // max_retransmissions and keepalive.count, as on Linux; a handshake ends
  // at whichever comes first.
  std::uint64_t user_timeout_ns = 0;
  bool no_delay = false;  // disables Nagle (RFC 1122 4.2.3.4)
  // SO_LINGER: unset = graceful close in the background; 0 = close() sends
  // RST; otherwise a connection not finished that long after close() is reset.
  std::optional<std::uint64_t> linger_ns;
  // RFC 5961 7: challenge ACKs are throttled, at most this many per window
  // per connection (the RFC's example: 10 in 5 s).
  unsigned challenge_ack_limit = 10;
  std::uint64_t challenge_ack_window_ns = 5'000'000'000;
  // And the stack's budget over all connections (challenge_budget.hh);
  // null: none. It outlives the connection.
  class challenge_budget* global_challenge_budget = nullptr;
  // Disjoint out-of-order ranges kept past RCV.NXT (DESIGN.md 4: every
  // resource has a bound; the bytes are bounded by the receive buffer).
  std::size_t max_ooo_ranges = 32;
  // SACKed ranges the sender keeps past SND.UNA (the scoreboard's bound).
  std::size_t max_sack_ranges = 32;
  // Segments the SACK sender keeps a transmit time for (sent_log.hh): one
  // flight's worth, 8192 full segments being 11 MiB at MSS 1448.
  std::size_t max_sent_records = 8192;
};

}  // namespace affine::stack::tcp
