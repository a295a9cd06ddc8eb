#pragma once
// A TCP connection as the stack shares it between cores: the protocol
// object (stack/tcp/connection.hh) behind a per-socket spinlock, the fibers
// waiting to read or write, and a reference count.
//
// Who holds a reference: the flow table while the 4-tuple is in it, the
// timer wheel of the core the socket is homed on, each queued rearm, the application's handle, and any
// code between a flow-table lookup and its unref(). The connection is
// touched only with `lock` held, never across a suspension (DESIGN.md 4).

#include <atomic>
#include <cstdint>

#include "affine/sync.hh"
#include "reactor/timer_wheel.hh"
#include "stack/tcp/connection.hh"

namespace affine::stack {

class listen_socket;
class stack;

// The wheel entry's callback (timer_fiber.cc); the context is the socket.
void on_wheel_entry(timer& entry, void* socket);

class tcp_socket {
 public:
  // Active open (SYN-SENT) or passive open from `syn` (SYN-RECEIVED).
  tcp_socket(stack& st, unsigned home_core, const tcp::open_params& p, const tcp::connection_config& cfg,
             std::uint64_t now_ns);
  tcp_socket(stack& st, unsigned home_core, const tcp::open_params& p, const tcp::connection_config& cfg,
             const tcp_segment& syn, std::uint64_t now_ns);
  tcp_socket(const tcp_socket&) = delete;
  tcp_socket& operator=(const tcp_socket&) = delete;

  void ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void unref() noexcept;  // deletes the socket with the last reference

  stack& owner() const { return st_; }
  unsigned home_core() const { return home_; }

  spinlock lock;
  tcp::connection conn;     // under lock
  wait_queue readers;       // under lock
  wait_queue writers;       // under lock
  listen_socket* parent = nullptr;  // under lock: the listener until accepted
  bool in_table = false;            // under lock
  bool in_time_wait = false;        // under lock: counted in the stack's TIME-WAIT total
  tcp::connection_stats folded;     // under lock: what the stack's totals hold of conn's counts (tcp_totals.hh)
  bool handle_open = false;         // under lock: an application handle exists
  // The connection's next deadline, published for the home core's timer
  // fiber (written under lock, read without).
  std::atomic<std::uint64_t> deadline{tcp::no_deadline};
  // The reactor whose RX queues last brought this flow a segment: where a
  // busy-polling reader polls (-1 before the first).
  std::atomic<int> rx_core{-1};
  // The RX queue that brought it (-1: unknown, or through an RPS backlog):
  // whose [[port.rxq]] busy_poll_budget_us applies.
  std::atomic<int> rx_queue{-1};
  // Set once the connection is CLOSED: the home core's timers let go of it.
  std::atomic<bool> retired{false};

  // The home core's timer wheel (timer_fiber.cc). `armed_for` is the deadline
  // the wheel entry is armed for (no_deadline: none), written by the home
  // core's timer fiber only; a settle that publishes an earlier deadline
  // queues the socket on that core's rearm list (`rearm_next`, while
  // `rearm_queued`). `homing` says whether the wheel holds a reference.
  enum class homing : std::uint8_t { none, pending, homed, gone };
  timer wheel_entry;
  std::atomic<std::uint64_t> armed_for{tcp::no_deadline};
  std::atomic<bool> rearm_queued{false};
  tcp_socket* rearm_next = nullptr;
  std::atomic<homing> home_state{homing::none};
  std::size_t homed_index = 0;  // in the home core's list of homed sockets (timer fiber only)

 private:
  ~tcp_socket();  // drops the listener reference of a child never accepted

  stack& st_;
  unsigned home_;
  std::atomic<std::uint32_t> refs_{1};
};

// A reference held for a scope.
class socket_ref {
 public:
  socket_ref() = default;
  explicit socket_ref(tcp_socket* s) noexcept : s_(s) {}  // adopts a reference
  socket_ref(socket_ref&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  socket_ref& operator=(socket_ref&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = o.s_;
      o.s_ = nullptr;
    }
    return *this;
  }
  ~socket_ref() { reset(); }
  void reset() noexcept {
    if (s_ != nullptr) s_->unref();
    s_ = nullptr;
  }
  tcp_socket* get() const noexcept { return s_; }
  tcp_socket* operator->() const noexcept { return s_; }
  tcp_socket& operator*() const noexcept { return *s_; }
  explicit operator bool() const noexcept { return s_ != nullptr; }
  tcp_socket* release() noexcept {
    tcp_socket* s = s_;
    s_ = nullptr;
    return s;
  }

 private:
  tcp_socket* s_ = nullptr;
};

}  // namespace affine::stack
