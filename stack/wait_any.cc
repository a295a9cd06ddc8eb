// net::wait_any on the userspace stack's sockets (docs/stack.md, "Waiting on several sockets").
//
// One waiter per queue an entry waits on (readers or acceptors for
// readable, writers for writable), all carrying the calling fiber's parking
// generation: the first notification on any of them wakes it, later ones
// find the generation gone and pass over it. Registering and checking are
// one step under each socket's lock, so a change after the check notifies
// a waiter already linked (no lost wakeup).

#include <mutex>

#include "affine/fiber.hh"
#include "reactor/here.hh"
#include "stack/listen_socket.hh"
#include "stack/tcp_socket.hh"
#include "stack/udp_socket.hh"
#include "stack/wait_any.hh"

namespace affine::stack {

namespace {

// An entry's socket, with a reference held for the wait: a close() of the
// handle from another fiber then cannot free it under us.
struct watched {
  tcp_socket* tcp = nullptr;
  listen_socket* listener = nullptr;
  udp_socket* udp = nullptr;
  net::readiness interest = net::readiness::none;
  wait_queue::waiter waiters[2];  // readers or acceptors; writers

  bool held() const { return tcp != nullptr || listener != nullptr || udp != nullptr; }
  spinlock& lock() const { return tcp ? tcp->lock : listener ? listener->lock : udp->lock; }
  // The queue notified when `bit` may have come true (under lock()).
  wait_queue& queue(net::readiness bit) const {
    if (tcp) return bit == net::readiness::writable ? tcp->writers : tcp->readers;
    return listener ? listener->acceptors : udp->readers;
  }
  wait_queue::waiter& waiter_for(net::readiness bit) { return waiters[bit == net::readiness::writable]; }

  // What of the interest holds now. Precondition: lock() held.
  net::readiness ready_now() const {
    using net::readiness;
    if (listener) {
      if (listener->closed) return readiness::closed;
      return listener->ready.empty() ? readiness::none : readiness::readable;
    }
    if (udp) return udp->closed ? readiness::closed : udp->empty() ? readiness::none : readiness::readable;
    if (!tcp->handle_open) return readiness::closed;
    const tcp::connection& c = tcp->conn;
    readiness r = readiness::none;
    // As read() decides whether to wait: data, the end of the stream, an error.
    if (has(interest, readiness::readable) &&
        (c.readable() > 0 || c.eof() || c.error() || c.state() == tcp::tcp_state::closed))
      r = r | readiness::readable;
    // Room in the send buffer, or a send that fails at once (an empty send
    // changes nothing and reports the error write() would).
    if (has(interest, readiness::writable) && (c.writable() > 0 || !tcp->conn.send({})))
      r = r | readiness::writable;
    return r;
  }

  void release() {
    if (tcp) tcp->unref();
    if (listener) listener->unref();
    if (udp) udp->unref();
  }
};

watched hold(const net::wait_entry& e) {
  watched w;
  w.interest = e.interest;
  const entry_sockets s = sockets_of(e);
  w.tcp = s.tcp;
  w.listener = s.listener;
  w.udp = s.udp;
  if (w.tcp) w.tcp->ref();
  if (w.listener) w.listener->ref();
  if (w.udp) w.udp->ref();
  return w;
}

constexpr net::readiness queue_bits[] = {net::readiness::readable, net::readiness::writable};

// Links the calling fiber (parking in `generation`) on each queue of `w`
// unless something is ready already; returns whether it is.
bool watch(watched& w, detail::fiber* self, std::uint32_t generation) {
  std::lock_guard g(w.lock());
  if (w.ready_now() != net::readiness::none) return true;
  for (net::readiness bit : queue_bits) {
    if (!has(w.interest, bit)) continue;
    wait_queue::waiter& q = w.waiter_for(bit);
    q.f = self;
    q.generation = generation;
    w.queue(bit).link(q);
  }
  return false;
}

// Takes `w`'s waiters off their queues and answers what is ready.
net::readiness unwatch(watched& w) {
  std::lock_guard g(w.lock());
  const net::readiness r = w.ready_now();
  for (net::readiness bit : queue_bits) {
    if (!has(w.interest, bit)) continue;
    wait_queue& q = w.queue(bit);
    if (wait_queue::waiter& mine = w.waiter_for(bit); mine.linked) q.unlink(mine);
    // UDP datagrams and accept-queue entries wake one waiter each: if that
    // was this fiber, a recv_from or accept waiting there must still hear
    // of it (it re-checks, so a spare wakeup costs nothing).
    if (has(r, bit) && !q.empty()) q.notify_one();
  }
  return r;
}

class waiter_on_stack final : public net::detail::multi_waiter {
 public:
  std::expected<std::size_t, std::error_code> wait_any(std::span<net::wait_entry> entries,
                                                       std::uint64_t deadline) override {
    net::detail::entry_states<watched> ws(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (entries[i].ready == net::readiness::none) ws[i] = hold(entries[i]);
    std::size_t ready;
    bool stopped = false;
    for (;;) {
      ready = 0;
      const detail::here::parking p = detail::here::begin_park();
      bool now = false;
      for (watched& w : ws.all())
        if (w.held() && (now = watch(w, p.self, p.generation))) break;
      if (now || now_ns() >= deadline) {
        detail::here::stay(p);  // not going to sleep after all
      } else {
        stopped = detail::here::park(p, deadline) == detail::wake_reason::canceled;
      }
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (!ws[i].held()) continue;
        entries[i].ready = unwatch(ws[i]);
        ready += entries[i].ready != net::readiness::none;
      }
      // Woken with nothing left (another fiber took it): wait again.
      if (ready > 0 || stopped || now_ns() >= deadline) break;
    }
    for (watched& w : ws.all()) w.release();
    if (ready == 0)
      return std::unexpected(std::make_error_code(stopped ? std::errc::operation_canceled : std::errc::timed_out));
    return ready;
  }
};

}  // namespace

net::detail::multi_waiter* stack_waiter() {
  static waiter_on_stack w;
  return &w;
}

}  // namespace affine::stack
