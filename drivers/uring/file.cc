#include "drivers/uring/file.hh"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <mutex>
#include <vector>

#include "affine/fiber.hh"
#include "affine/runtime.hh"
#include "reactor/runtime_state.hh"

namespace affine::drivers::uring {

ring_file::~ring_file() {
  if (fd_ >= 0) close();
}

void ring_file::link(op& o) {
  o.prev = nullptr;
  o.next = head_;
  if (head_ != nullptr) head_->prev = &o;
  head_ = &o;
}

void ring_file::unlink(op& o) {
  (o.prev != nullptr ? o.prev->next : head_) = o.next;
  if (o.next != nullptr) o.next->prev = o.prev;
}

bool ring_file::enter(op& o) {
  std::lock_guard g(lock_);
  if (closing_) return false;
  o.core = this_fiber::core();
  link(o);
  return true;
}

bool ring_file::reenter(op& o) {
  // Under the lock: a close() that comes later sees the new core, and its
  // cancel runs on that core after the caller has started `o` there.
  std::lock_guard g(lock_);
  if (closing_) return false;
  o.core = this_fiber::core();
  return true;
}

bool ring_file::leave(op& o) {
  std::lock_guard g(lock_);
  unlink(o);
  if (closing_ && head_ == nullptr) drained_.notify_all();
  return closing_;
}

int ring_file::run(const request& r, std::uint64_t deadline_ns, stop_mode stop) {
  op o;
  if (!enter(o)) return -ECANCELED;
  const int res = submit_and_wait(o, r, deadline_ns, stop);
  leave(o);
  return res;
}

int ring_file::submit_and_wait(op& o, const request& r, std::uint64_t deadline_ns, stop_mode stop) {
  assert(o.core == this_fiber::core());
  core_ring& ring = rings_.on(o.core);
  o.done.arm();
  if (const int e = ring.start(o, fd_, r); e < 0) return e;
  const detail::wake_reason why = o.done.wait(deadline_ns, stop);
  if (why == detail::wake_reason::notified) return o.done.result();
  cancellable c[1];
  c[0].target = &o;
  cancel_and_wait(rings_, o.core, c);
  const int res = o.done.result();
  // Done before the cancel reached it: the result stands (no data lost).
  if (res != -ECANCELED && res != -EINTR) return res;
  return why == detail::wake_reason::canceled ? -ECANCELED : -ETIMEDOUT;
}

void cancel_and_wait(const ring_set& rings, unsigned core, std::span<cancellable> ops) {
  for (cancellable& c : ops) c.cancel.done.arm();
  // Sent by the ring's own reactor. Each cancel's completion tells us it
  // has been handled; from then on nothing refers to its target but the
  // target's CQE, which the second wait takes.
  core_ring& ring = rings.on(core);
  detail::post(*detail::this_core()->rt, core, [&ring, ops] {
    for (cancellable& c : ops)
      // Reaped on this thread: a target done here needs no cancel.
      if (c.target->done.done() || !ring.prepare_cancel(*c.target, &c.cancel)) c.cancel.done.complete(-EBUSY);
    ring.submit();
  });
  for (cancellable& c : ops) c.cancel.done.wait(no_deadline);
  for (cancellable& c : ops) c.target->done.wait(no_deadline);
}

void ring_file::cancel_on(unsigned core) {
  auto cancel_here = [this, core] {
    core_ring& ring = rings_.on(core);
    lock_.lock();
    // Every operation named here is still linked, so its fiber has not come
    // back from run() and cannot have reused the op's address; and it could
    // start another on this ring only by running on this core, after us.
    for (op* o = head_; o != nullptr; o = o->next)
      if (o->core == core) ring.prepare_cancel(*o);
    lock_.unlock();
    ring.submit();
  };
  if (this_fiber::core() == core) {
    cancel_here();
  } else {
    submit_to(core, cancel_here);
  }
}

void ring_file::close() {
  if (!this_fiber::in_fiber()) {
    lock_.lock();
    assert(head_ == nullptr && "a uring socket closed off the reactors while a fiber uses it");
    closing_ = true;
    lock_.unlock();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return;
  }
  lock_.lock();
  if (closing_) {
    lock_.unlock();
    return;
  }
  closing_ = true;
  std::vector<unsigned> cores;  // off the data path: closing may allocate
  for (op* o = head_; o != nullptr; o = o->next)
    if (std::ranges::find(cores, o->core) == cores.end()) cores.push_back(o->core);
  lock_.unlock();
  for (unsigned c : cores) cancel_on(c);
  lock_.lock();
  while (head_ != nullptr) {
    drained_.wait(lock_, no_deadline, stop_mode::ignore);
    lock_.lock();
  }
  lock_.unlock();
  if (fd_ < 0) return;
  op o;
  o.core = this_fiber::core();
  const request r{.what = request::kind::close, .async = close_may_block_};
  if (submit_and_wait(o, r, no_deadline, stop_mode::ignore) == -EBUSY) ::close(fd_);
  fd_ = -1;
}

}  // namespace affine::drivers::uring
