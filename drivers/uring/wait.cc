// net::wait_any on kernel sockets. Each round starts one IORING_OP_POLL_ADD
// per socket on the calling core's ring, all setting one event as they
// complete: the first wakes the fiber, the rest are cancelled and waited
// for (they live on the fiber's stack). Every poll stays in its socket's
// operations in flight for the whole call, so a close() from another fiber
// cancels it (ending the wait) and keeps the fd open until the wait has let
// go of it; the file is touched no more after that.
//
// The answer is what poll(2) says, without waiting, while the polls are
// still in: level-triggered like the stack's; a completion only says "look".

#include <poll.h>

#include <utility>

#include "affine/fiber.hh"
#include "drivers/uring/listener.hh"
#include "drivers/uring/stream.hh"
#include "drivers/uring/udp.hh"

namespace affine::drivers::uring {

namespace {

using net::readiness;

ring_file& file_of(const net::wait_entry& e) {
  using net::detail::handle_access;
  if (e.stream) return static_cast<uring_stream*>(handle_access::of(*e.stream))->file();
  if (e.listener) return static_cast<uring_listener*>(handle_access::of(*e.listener))->file();
  return static_cast<uring_udp*>(handle_access::of(*e.udp))->file();
}

short poll_events(const net::wait_entry& e) {
  short ev = 0;
  // POLLRDHUP: the peer's FIN counts too (read() returns 0 at once).
  if (has(e.interest, readiness::readable)) ev |= e.stream ? POLLIN | POLLRDHUP : POLLIN;
  if (has(e.interest, readiness::writable)) ev |= POLLOUT;
  return ev;
}

// Bytes read_view lent and not consumed: readable, whatever the kernel says.
bool lends_input(const net::wait_entry& e) {
  return e.stream && static_cast<uring_stream*>(net::detail::handle_access::of(*e.stream))->has_lent_input();
}

// An error or a hang-up makes reads and writes return at once.
readiness answer(const net::wait_entry& e, short revents) {
  readiness r = readiness::none;
  if (has(e.interest, readiness::readable) &&
      ((revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) != 0 || lends_input(e)))
    r = r | readiness::readable;
  if (has(e.interest, readiness::writable) && (revents & (POLLOUT | POLLHUP | POLLERR)) != 0)
    r = r | readiness::writable;
  return r;
}

// One entry's socket, while its poll is in the file's operations in flight.
struct watched {
  ring_file* file = nullptr;  // null: not in (closed before the call, or being closed then)
  op poll;
};

// The entries' sockets for one call: their polls, in from construction to
// leave(), started in rounds; and the answers. Entries closed before the
// call (net_api.cc answered them) are skipped and not counted.
class poll_set {
 public:
  explicit poll_set(std::span<net::wait_entry> entries)
      : entries_(entries), ws_(entries.size()), fds_(entries.size()), started_(entries.size()) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      fds_[i] = {.fd = -1, .events = poll_events(entries[i]), .revents = 0};
      if (entries[i].ready == readiness::closed) {
        ++closed_before_;
        continue;
      }
      ring_file& f = file_of(entries[i]);
      if (!f.enter(ws_[i].poll)) {
        closed(i);
        continue;
      }
      ws_[i].file = &f;
      fds_[i].fd = f.fd();
    }
  }
  ~poll_set() { leave(); }
  poll_set(const poll_set&) = delete;
  poll_set& operator=(const poll_set&) = delete;

  // poll(2) without waiting: the entries' answers; how many are ready.
  std::size_t look() {
    const bool any = ::poll(fds_.all().data(), fds_.all().size(), 0) > 0;
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (fds_[i].fd >= 0) entries_[i].ready = answer(entries_[i], any ? fds_[i].revents : 0);
    return count();
  }

  // Starts the polls, waits for the first to complete or the deadline, and
  // ends the rest. False when a ring could take no more.
  bool round(std::uint64_t deadline) {
    event first;
    const ring_set* rings = nullptr;
    std::size_t k = 0;
    bool ok = true;
    bool wait = true;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      watched& w = ws_[i];
      if (fds_[i].fd < 0) continue;
      if (!w.file->reenter(w.poll)) {  // being closed: that is the answer
        closed(i);
        wait = false;
        break;
      }
      w.poll.done.arm();
      w.poll.first_of = &first;
      rings = &w.file->rings();
      const request poll{.what = request::kind::poll, .flags = fds_[i].events};
      if (rings->on(w.poll.core).start(w.poll, fds_[i].fd, poll) < 0) {
        ok = wait = false;
        break;
      }
      started_[k++].target = &w.poll;
    }
    if (wait) first.wait(deadline);
    // All on one ring: nothing above suspends.
    if (k > 0) cancel_and_wait(*rings, started_[0].target->core, started_.all().first(k));
    return ok;
  }

  // Takes every poll out of its file (a close() waiting for that goes on),
  // answers `closed` for a file being closed; how many are ready.
  std::size_t leave() {
    for (std::size_t i = 0; i < entries_.size(); ++i)
      if (ring_file* f = std::exchange(ws_[i].file, nullptr); f != nullptr && f->leave(ws_[i].poll)) closed(i);
    return count();
  }

 private:
  void closed(std::size_t i) {
    entries_[i].ready = readiness::closed;
    fds_[i].fd = -1;
  }

  std::size_t count() const {
    std::size_t n = 0;
    for (const net::wait_entry& e : entries_) n += e.ready != readiness::none;
    return n - closed_before_;
  }

  std::span<net::wait_entry> entries_;
  net::detail::entry_states<watched> ws_;
  net::detail::entry_states<pollfd> fds_;
  net::detail::entry_states<cancellable> started_;
  std::size_t closed_before_ = 0;
};

class waiter_on_rings final : public net::detail::multi_waiter {
 public:
  std::expected<std::size_t, std::error_code> wait_any(std::span<net::wait_entry> entries,
                                                       std::uint64_t deadline) override {
    poll_set polls(entries);
    bool ok = true;
    // Woken with nothing ready (another fiber took it first): again.
    bool stopped = false;
    for (std::size_t ready = polls.look(); ready == 0 && ok && !stopped && now_ns() < deadline; ready = polls.look()) {
      ok = polls.round(deadline);
      stopped = this_fiber::stop_requested();
    }
    if (const std::size_t ready = polls.leave(); ready > 0) return ready;
    const auto e = !ok ? std::errc::device_or_resource_busy : stopped ? std::errc::operation_canceled : std::errc::timed_out;
    return std::unexpected(std::make_error_code(e));
  }
};

waiter_on_rings the_waiter;

}  // namespace

net::detail::multi_waiter* uring_stream::waiter() const { return &the_waiter; }
net::detail::multi_waiter* uring_listener::waiter() const { return &the_waiter; }
net::detail::multi_waiter* uring_udp::waiter() const { return &the_waiter; }

}  // namespace affine::drivers::uring
