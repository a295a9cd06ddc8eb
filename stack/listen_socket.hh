#pragma once
// A listening TCP port (RFC 9293 3.10.7.2): the connections it made that
// are still in SYN-RECEIVED (counted, bounded), and those established and
// waiting for accept() (the accept queue, bounded by the backlog).
//
// References: the stack's listener table while listening, each child
// connection until it is accepted or dies, and the application's handle.
// Lock order: a socket's lock, then its listener's lock.

#include <atomic>
#include <cstdint>
#include <deque>

#include "affine/net.hh"
#include "affine/sync.hh"
#include "stack/tcp_socket.hh"

namespace affine::stack {

class listen_socket {
 public:
  listen_socket(net::endpoint local, unsigned backlog, const net::stream_options& accepted)
      : local_(local), backlog_(backlog == 0 ? 1 : backlog), accepted_(accepted) {}
  listen_socket(const listen_socket&) = delete;
  listen_socket& operator=(const listen_socket&) = delete;

  void ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void unref() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  const net::endpoint& local() const { return local_; }
  unsigned backlog() const { return backlog_; }
  const net::stream_options& accepted_options() const { return accepted_; }

  spinlock lock;
  wait_queue acceptors;            // under lock
  std::deque<tcp_socket*> ready;   // under lock; a reference each
  unsigned half_open = 0;          // under lock: children in SYN-RECEIVED
  bool closed = false;             // under lock

 private:
  ~listen_socket() = default;

  net::endpoint local_;
  unsigned backlog_;
  net::stream_options accepted_;
  std::atomic<std::uint32_t> refs_{1};
};

}  // namespace affine::stack
