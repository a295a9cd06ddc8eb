#pragma once
// A listening TCP port (RFC 9293 3.10.7.2): its LISTEN processing and the
// bounds of its queues (tcp::listener, the one implementation, which the
// LISTEN and SYN-RECEIVED suites test), and the connections established
// and waiting for accept() (the accept queue, bounded by the backlog).
//
// References: the stack's listener table while listening, each child
// connection until it is accepted or dies, and the application's handle.
// Lock order: a socket's lock, then its listener's lock.

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>

#include "affine/net.hh"
#include "affine/sync.hh"
#include "stack/family.hh"
#include "stack/tcp/listener.hh"
#include "stack/tcp_socket.hh"

namespace affine::stack {

class listen_socket final : public tcp::admission {
 public:
  // SYN-RECEIVED and the accept queue are both bounded by `backlog`.
  listen_socket(net::endpoint local, binding bound, unsigned backlog, const net::stream_options& accepted,
                const tcp::isn_generator& isn, const tcp::syn_cookies* cookies, tcp::syn_cookie_mode mode)
      : bound(bound),
        queue({.syn_backlog = backlog == 0 ? 1u : backlog,
               .accept_backlog = backlog == 0 ? 1u : backlog,
               .cookies = mode},
              isn, cookies),
        local_(local),
        accepted_(accepted) {}
  listen_socket(const listen_socket&) = delete;
  listen_socket& operator=(const listen_socket&) = delete;

  void ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void unref() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  const net::endpoint& local() const { return local_; }
  const net::stream_options& accepted_options() const { return accepted_; }

  // A child's handshake completed (its socket's lock held: lock order
  // socket, then listener). A closed listener admits too: the child then
  // settles into child_settled(), which resets it.
  bool admit(tcp::connection&) override {
    std::lock_guard g(lock);
    return closed || queue.admit();
  }

  const binding bound;  // the traffic it takes (family.hh)
  spinlock lock;
  wait_queue acceptors;            // under lock
  std::deque<tcp_socket*> ready;   // under lock; a reference each: the accept queue
  tcp::listener queue;             // under lock: LISTEN, and the queues' bounds
  bool closed = false;             // under lock

 private:
  ~listen_socket() = default;

  net::endpoint local_;
  net::stream_options accepted_;
  std::atomic<std::uint32_t> refs_{1};
};

}  // namespace affine::stack
