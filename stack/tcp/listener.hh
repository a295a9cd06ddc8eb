#pragma once
// A listening port: LISTEN state processing (RFC 9293 3.10.7.2) with a
// bounded SYN queue, a bounded accept queue (the backlog) and a bound on the
// connections it has made that are still alive.
//
// Ownership rule. The listener owns no connection and allocates nothing per
// connection itself. input() hands each new connection (SYN-RECEIVED) to the
// caller, whose flow table owns it from then on and destroys it when it is
// done (after its `closed` event, or whenever it likes). The listener keeps
// non-owning pointers to the connections it made on three intrusive lists
// threaded through the connections themselves:
//   SYN queue     SYN-RECEIVED, not yet admitted
//   accept queue  ESTABLISHED (or later), waiting for accept()
//   accepted      handed to the application by accept()
// A connection moves from the SYN queue to the accept queue when its
// handshake completes, and leaves whichever list it is on when destroyed. A
// listener destroyed first detaches every connection, and aborts those not
// yet accepted: they send RST on their next output() and report `closed`,
// so their owner can reap them.
//
// A full accept queue: further SYNs are dropped, and the final ACK of a
// handshake is ignored (Linux with tcp_abort_on_overflow = 0): the
// connection stays in SYN-RECEIVED, the SYN-ACK is retransmitted, and the
// peer's next ACK completes it if room has been made. Both are counted.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "stack/flow.hh"
#include "stack/tcp/config.hh"
#include "stack/tcp/connection.hh"
#include "stack/tcp/isn.hh"
#include "stack/tcp/state.hh"
#include "stack/wire/tcp_segment.hh"

namespace affine::stack::tcp {

struct listener_config {
  std::size_t syn_backlog = 256;       // SYN-RECEIVED connections at once
  std::size_t accept_backlog = 128;    // established connections not yet accepted
  std::size_t max_connections = 65536; // connections made by this listener and still alive
  connection_config connection;        // for every connection it makes
};

struct listener_stats {
  std::uint64_t syns_accepted = 0;
  std::uint64_t syn_queue_full = 0;
  std::uint64_t accept_queue_full = 0;  // SYNs dropped and final ACKs ignored
  std::uint64_t connection_limit = 0;
  std::uint64_t resets_sent = 0;        // to ACKs (RFC 9293 3.10.7.2)
};

// An intrusive FIFO of connections, linked through connection::link_*.
class connection_list {
 public:
  void push_back(connection& c);
  void remove(connection& c);
  connection* front() const { return head_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  connection* head_ = nullptr;
  connection* tail_ = nullptr;
  std::size_t size_ = 0;
};

class listener {
 public:
  struct input_result {
    std::optional<tcp_segment> reply;  // the RST answering an ACK
    drop_reason drop = drop_reason::none;
    std::unique_ptr<connection> created;  // a SYN accepted: SYN-RECEIVED, owned by the caller now
  };

  // `isn` must outlive the listener.
  listener(const listener_config& cfg, const isn_generator& isn);
  ~listener();
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;

  // A segment for this port that matches no connection (`tuple` as the
  // local side sees it).
  input_result input(const flow_tuple& tuple, const tcp_segment& seg, std::uint64_t now_ns);
  // The oldest connection in the accept queue, moved to `accepted`; nullptr
  // when the queue is empty. The caller's flow table still owns it. It may
  // have closed meanwhile (reset before it was accepted): its error() says so.
  connection* accept();

  std::size_t syn_queue_size() const { return syn_queue_.size(); }
  std::size_t accept_queue_size() const { return accept_queue_.size(); }
  std::size_t connection_count() const { return syn_queue_.size() + accept_queue_.size() + accepted_.size(); }
  const listener_config& config() const { return cfg_; }
  const listener_stats& stats() const { return stats_; }

 private:
  friend class connection;
  // The handshake of `c` completed: SYN queue -> accept queue. False when the
  // accept queue is full (the connection then ignores the ACK).
  bool admit(connection& c);
  // `c` is being destroyed.
  void release(connection& c);
  static void detach(connection_list& list, bool abort_them);

  listener_config cfg_;
  const isn_generator& isn_;
  connection_list syn_queue_;
  connection_list accept_queue_;
  connection_list accepted_;
  listener_stats stats_;
};

}  // namespace affine::stack::tcp
