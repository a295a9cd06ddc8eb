#pragma once
// A bound UDP port on the stack (RFC 768): the datagrams received for it,
// waiting for recv_from in a bounded queue, and the fibers waiting for them.
//
// The queue is preallocated when the port is bound: a ring of slots (one
// per datagram: sender and size) over one byte ring holding the payloads,
// so the RX path copies a datagram out of its mbuf without allocating.
// Bounds: `max_datagrams` slots, and bytes for that many datagrams of the
// largest size one frame carries (a reassembled datagram takes more bytes,
// and is refused once the byte ring cannot hold it).
//
// References: the stack's port table while bound, the application's handle,
// and the RX path between a table lookup and its unref(). The queue is
// touched only with `lock` held, never across a suspension (DESIGN.md 4).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "affine/net.hh"
#include "affine/sync.hh"
#include "stack/family.hh"
#include "stack/tcp/ring_buffer.hh"

namespace affine::stack {

class udp_socket {
 public:
  udp_socket(net::endpoint local, binding bound, std::size_t max_datagrams, std::size_t max_datagram_bytes);
  udp_socket(const udp_socket&) = delete;
  udp_socket& operator=(const udp_socket&) = delete;

  void ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void unref() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  const net::endpoint& local() const { return local_; }
  const binding bound;  // the traffic it takes (family.hh)
  // The port picked for a bind to port 0; before the socket is in the table.
  void set_port(std::uint16_t port) { local_.port = port; }

  // Precondition: lock held. Copies the datagram in; false when the queue
  // has no slot or no room for its bytes (the caller counts the drop).
  bool push(net::endpoint from, std::span<const std::byte> payload);
  // Precondition: lock held, !empty(). The oldest datagram into `buf`, its
  // tail dropped when `buf` is shorter.
  net::udp_socket::datagram_info pop(std::span<std::byte> buf);
  bool empty() const { return count_ == 0; }  // precondition: lock held
  std::size_t queued() const { return count_; }  // precondition: lock held

  // Sockets alive, for leak checks in tests.
  static std::size_t live_count();

  spinlock lock;
  wait_queue readers;   // under lock
  bool closed = false;  // under lock: unbound; readers leave with ECANCELED

 private:
  ~udp_socket();

  struct slot {
    net::endpoint from;
    std::size_t size = 0;
  };

  net::endpoint local_;
  tcp::ring_buffer bytes_;   // the payloads, in slot order
  std::vector<slot> slots_;  // a ring: count_ slots from head_
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::atomic<std::uint32_t> refs_{1};
};

}  // namespace affine::stack
