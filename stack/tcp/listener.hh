#pragma once
// LISTEN (RFC 9293 3.10.7.2) of one listening port, as the stack runs it
// (stack::listen_in, under the listen_socket's lock) and as the LISTEN and
// SYN-RECEIVED suites test it: which segments are answered and how, the
// ISS and timestamp offset of the connection a SYN makes, and the bounds
// of the port's two queues:
//   SYN-RECEIVED  connections made from a SYN, handshake not complete
//   accept queue  established, waiting for accept() (the backlog)
//
// The listener counts them and owns no connection. Its owner makes the
// connection a verdict asks for, gives it an admission to ask when its
// handshake completes, and reports what leaves: child_gone(), accepted().
// Calls are serialized by the owner.
//
// A full accept queue: further SYNs are dropped, and the final ACK of a
// handshake is ignored (Linux with tcp_abort_on_overflow = 0): the
// connection stays in SYN-RECEIVED, the SYN-ACK is retransmitted, and the
// peer's next ACK completes it if room has been made. Both are counted.
//
// A full SYN-RECEIVED queue (or every SYN, as configured): the SYN is
// answered with a SYN cookie (syn_cookie.hh) and nothing is kept. While
// cookies have been sent in the last two slots (or always), an ACK that
// matches no connection is a returning cookie: a valid one opens the
// connection it stands for (the verdict's `syn`), a forged or stale one is
// dropped and counted; otherwise such an ACK gets LISTEN's RST.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "stack/flow.hh"
#include "stack/tcp/connection.hh"
#include "stack/tcp/isn.hh"
#include "stack/tcp/state.hh"
#include "stack/tcp/syn_cookie.hh"
#include "stack/wire/tcp_segment.hh"

namespace affine::stack::tcp {

struct listener_config {
  std::size_t syn_backlog = 128;     // connections in SYN-RECEIVED at once
  std::size_t accept_backlog = 128;  // established connections not yet accepted
  syn_cookie_mode cookies = syn_cookie_mode::automatic;
};

struct listener_stats {
  std::uint64_t syns_accepted = 0;
  std::uint64_t syn_queue_full = 0;     // SYNs dropped (cookies off)
  std::uint64_t accept_queue_full = 0;  // SYNs dropped and final ACKs ignored
  std::uint64_t resets_sent = 0;        // to ACKs (RFC 9293 3.10.7.2)
  std::uint64_t cookies_sent = 0;
  std::uint64_t cookies_accepted = 0;
  std::uint64_t cookies_invalid = 0;
};

class listener {
 public:
  struct verdict {
    std::optional<tcp_segment> reply{};  // the RST answering an ACK, or a SYN cookie's SYN-ACK
    drop_reason drop = drop_reason::none;
    // A SYN taken: make the connection (SYN-RECEIVED) from it with these.
    std::optional<open_params> open{};
    // A returning cookie: make the connection from this SYN instead (the
    // one the cookie stands for), call its syn_ack_sent(), then give it
    // the segment that brought the cookie.
    std::optional<tcp_segment> syn{};
    bool cookie_sent = false;
  };

  // `isn` and `cookies` (null: none, whatever the mode) must outlive the
  // listener.
  listener(const listener_config& cfg, const isn_generator& isn, const syn_cookies* cookies = nullptr)
      : cfg_(cfg), isn_(isn), cookies_(cookies) {}

  // A segment for this port that matches no connection (`tuple` as the
  // local side sees it); `conn` is what its connections are made with. A
  // verdict that opens counts one in SYN-RECEIVED. `reopen_iss`: the SYN
  // ended a connection's TIME-WAIT, and the one it opens takes this ISS
  // (connection::reopen_iss; a SYN cookie still makes its own).
  verdict input(const flow_tuple& tuple, const tcp_segment& seg, std::uint64_t now_ns, const connection_config& conn,
                std::optional<seq32> reopen_iss = std::nullopt);
  // A child's handshake completed (its admission asks): into the accept
  // queue if there is room, else false and it stays in SYN-RECEIVED.
  bool admit();
  // A child left without being accepted: from SYN-RECEIVED (never
  // admitted) or from the accept queue.
  void child_gone(bool admitted);
  // The application took one from the accept queue.
  void accepted();

  std::size_t syn_received() const { return syn_received_; }
  std::size_t accept_queue() const { return accept_queue_; }
  const listener_config& config() const { return cfg_; }
  const listener_stats& stats() const { return stats_; }

 private:
  bool cookies_returning(std::uint64_t now_ns) const;
  verdict send_cookie(const flow_tuple& tuple, const tcp_segment& seg, std::uint64_t now_ns,
                      const connection_config& conn);
  verdict take_cookie(const flow_tuple& tuple, const tcp_segment& seg, std::uint64_t now_ns);
  // RFC 7323 5.4's offset of a connection from `tuple`.
  std::uint32_t ts_offset(const flow_tuple& tuple) const;

  listener_config cfg_;
  const isn_generator& isn_;
  const syn_cookies* cookies_;
  std::optional<std::uint64_t> last_cookie_ns_;
  std::size_t syn_received_ = 0;
  // Children a returning SYN cookie made, between the cookie's check and
  // their admission (the same RX batch): never in the SYN queue (RFC 4987:
  // the cookie stands for its entry), so never counted against its bound.
  std::size_t cookie_children_ = 0;
  std::size_t accept_queue_ = 0;
  // A child not admitted leaves: a cookie's first, then the SYN queue's
  // (which is which does not matter to the sum; the SYN queue never looks
  // fuller than it is).
  void child_leaves_syn_received();
  listener_stats stats_;
};

}  // namespace affine::stack::tcp
