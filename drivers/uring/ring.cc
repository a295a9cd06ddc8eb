#include "drivers/uring/ring.hh"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "affine/log.hh"
#include "reactor/core.hh"

namespace affine::drivers::uring {

namespace {

// CQEs handled per poll(): the other rungs of the loop get their turn.
constexpr unsigned poll_budget = 256;
// Completions can outnumber submissions in flight only by the cancels; a
// deep CQ keeps the kernel off its overflow list when many fibers wait.
constexpr unsigned cq_per_sq = 4;
constexpr unsigned deferred_flags =
    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_R_DISABLED;

std::string setup_error(int err) {
  std::string what = fmt::format("io_uring setup failed: {}", std::strerror(err));
  if (err == EPERM || err == ENOSYS)
    what += " (io_uring is off here: see /proc/sys/kernel/io_uring_disabled, or a seccomp filter)";
  return what;
}

// IORING_REGISTER_ENABLE_RINGS (Linux 5.10); liburing 2.3 declares
// io_uring_enable_rings but does not export it.
int enable_ring(int ring_fd) {
  return int(::syscall(__NR_io_uring_register, ring_fd, IORING_REGISTER_ENABLE_RINGS, nullptr, 0));
}

}  // namespace

std::expected<std::unique_ptr<core_ring>, std::string> core_ring::create(unsigned core, unsigned entries,
                                                                         bool deferred) {
  const int efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (efd < 0) return std::unexpected(fmt::format("eventfd for io_uring: {}", std::strerror(errno)));
  std::unique_ptr<core_ring> r(new core_ring(core, efd));
  // Task work (a receive that a poll found ready) runs when the reactor
  // next enters the kernel, not at once on an interrupt to it: otherwise
  // the woken reactor took the socket's lock while the sender's softirq on
  // the other CPU still held it (11% of the proxy's CPU spun there, perf,
  // sysbench through the proxy on 2 cores). COOP_TASKRUN, not
  // DEFER_TASKRUN: a reactor sleeps in epoll on the ring's eventfd, and on
  // Linux 6.18 a deferred ring signals it for task work queued from
  // softirq (every TCP receive) only from an RCU callback, 16 ms later
  // here, where a COOP ring's signal comes in 5 us (a TCP round trip
  // through the uring backend took 32 ms; an epoll on a deferred ring's
  // own fd never woke). SINGLE_ISSUER wants one submitter, the reactor
  // thread, so the ring starts disabled and attach() enables it there.
  // Kernels before 6.0 refuse the flags: the ring is made without.
  io_uring_params p{};
  auto init = [&](unsigned extra_flags) {
    p = io_uring_params{};
    p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP | extra_flags;
    p.cq_entries = entries * cq_per_sq;
    return io_uring_queue_init_params(entries, &r->ring_, &p);
  };
  int e = deferred ? init(deferred_flags) : -EINVAL;
  if (e == -EINVAL) e = init(0);  // refused (before 6.1), or not asked for
  if (e < 0) {
    r->ring_.ring_fd = -1;  // nothing for the destructor to tear down but the eventfd
    return std::unexpected(setup_error(-e));
  }
  r->deferred_ = (p.flags & IORING_SETUP_COOP_TASKRUN) != 0;
  // NODROP (Linux 5.5): completions beyond the CQ wait in the kernel
  // instead of being lost, so a burst never loses a fiber's wakeup.
  if ((p.features & IORING_FEAT_NODROP) == 0)
    return std::unexpected(std::string("io_uring without IORING_FEAT_NODROP: Linux 5.5 or later is needed"));
  if (const int e = io_uring_register_eventfd(&r->ring_, efd); e < 0)
    return std::unexpected(fmt::format("io_uring_register_eventfd: {}", std::strerror(-e)));
  return r;
}

core_ring::~core_ring() {
  assert(in_flight_ == 0 && "io_uring torn down with operations in flight");
  if (ring_.ring_fd >= 0) io_uring_queue_exit(&ring_);
  if (event_fd_ >= 0) ::close(event_fd_);
}

std::expected<void, std::string> core_ring::attach() {
  detail::core_ctx* c = detail::this_core();
  assert(c != nullptr && c->index == core_);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = event_fd_;
  // The reactor sleeps in epoll on its own eventfd; our CQE eventfd must be
  // in that set too (EEXIST: the reactor registered interrupt_fd() itself).
  if (::epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, event_fd_, &ev) != 0 && errno != EEXIST)
    return std::unexpected(fmt::format("reactor {}: epoll_ctl for the io_uring eventfd: {}", core_, std::strerror(errno)));
  epoll_fd_ = c->epoll_fd;
  if (deferred_ && !enabled_) {
    // This thread becomes the ring's one submitter.
    if (enable_ring(ring_.ring_fd) != 0) {
      const int e = -errno;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, event_fd_, nullptr);
      epoll_fd_ = -1;
      return std::unexpected(fmt::format("reactor {}: enabling the io_uring: {}", core_, std::strerror(-e)));
    }
    enabled_ = true;
  }
  c->pollers.push_back(this);
  return {};
}

void core_ring::detach() {
  detail::core_ctx* c = detail::this_core();
  assert(c != nullptr && c->index == core_);
  std::erase(c->pollers, this);
  if (epoll_fd_ >= 0) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, event_fd_, nullptr);
  epoll_fd_ = -1;
}

io_uring_sqe* core_ring::next_sqe() {
  io_uring_sqe* s = io_uring_get_sqe(&ring_);
  if (s != nullptr) return s;
  submit();  // the queue is full of deferred SQEs: send them
  return io_uring_get_sqe(&ring_);
}

int core_ring::start(op& o, int fd, const request& r) {
  io_uring_sqe* s = next_sqe();
  if (s == nullptr) return -EBUSY;
  // A CQE's res is an int: larger transfers are split by the callers' loops.
  const auto len = unsigned(std::min<std::size_t>(r.len, INT_MAX));
  switch (r.what) {
    case request::kind::accept:
      io_uring_prep_accept(s, fd, static_cast<sockaddr*>(r.buf), r.addr_len, r.flags);
      break;
    case request::kind::connect:
      io_uring_prep_connect(s, fd, static_cast<const sockaddr*>(r.buf), socklen_t(r.len));
      break;
    case request::kind::recv: io_uring_prep_recv(s, fd, r.buf, len, r.flags); break;
    case request::kind::send: io_uring_prep_send(s, fd, r.buf, len, r.flags); break;
    case request::kind::recvmsg:
      io_uring_prep_recvmsg(s, fd, static_cast<msghdr*>(r.buf), unsigned(r.flags));
      break;
    case request::kind::sendmsg:
      io_uring_prep_sendmsg(s, fd, static_cast<const msghdr*>(r.buf), unsigned(r.flags));
      break;
    case request::kind::shutdown: io_uring_prep_shutdown(s, fd, r.flags); break;
    case request::kind::close: io_uring_prep_close(s, fd); break;
    case request::kind::poll: io_uring_prep_poll_add(s, fd, unsigned(r.flags)); break;
  }
  if (r.async) io_uring_sqe_set_flags(s, IOSQE_ASYNC);
  io_uring_sqe_set_data(s, &o);
  ++in_flight_;
  // Submitting at once keeps latency low; when other fibers are about to
  // run here, one io_uring_enter for all of them is cheaper.
  if (detail::this_core()->rq.empty()) submit();
  return 0;
}

bool core_ring::prepare_cancel(const op& target, op* notify) {
  io_uring_sqe* s = next_sqe();
  if (s == nullptr) return false;
  io_uring_prep_cancel(s, const_cast<op*>(&target), 0);
  io_uring_sqe_set_data(s, notify);
  if (notify != nullptr) ++in_flight_;
  return true;
}

void core_ring::submit() {
  if (io_uring_sq_ready(&ring_) == 0) return;
  // On failure the SQEs stay queued; flush() tries again next loop turn.
  if (const int r = io_uring_submit(&ring_); r < 0)
    AFFINE_LOG_RATELIMITED(warn, "reactor {}: io_uring_submit: {}", core_, std::strerror(-r));
}

unsigned core_ring::poll() {
  // Completions the kernel had to hold back (a full CQ), and the deferred
  // task work of operations that became ready, come in first.
  if (io_uring_cq_has_overflow(&ring_) || work_pending()) io_uring_get_events(&ring_);
  unsigned n = 0;
  unsigned head;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    if (auto* o = static_cast<op*>(io_uring_cqe_get_data(cqe))) {
      --in_flight_;
      // Before complete(): once it is done the fiber may return, and the
      // event with it.
      if (o->first_of != nullptr) o->first_of->set();
      o->done.complete(cqe->res);
    }
    if (++n == poll_budget) break;
  }
  io_uring_cq_advance(&ring_, n);
  return n;
}

unsigned core_ring::flush() {
  const unsigned n = io_uring_sq_ready(&ring_);
  submit();
  return n;
}

bool core_ring::try_enter_interrupt_mode() {
  submit();
  if (io_uring_cq_ready(&ring_) > 0 || io_uring_cq_has_overflow(&ring_) || work_pending()) return false;
  // Forget the signals of CQEs already reaped, so that epoll sleeps; a CQE
  // posted from here on signals the eventfd again (the kernel posts, then
  // signals), and so does deferred task work that finds none queued (the
  // kernel sets the task-run flag, then signals).
  std::uint64_t v;
  [[maybe_unused]] ssize_t got = ::read(event_fd_, &v, sizeof v);
  if (io_uring_cq_ready(&ring_) == 0 && !work_pending()) return true;
  // One landed between the check and the read, and its signal may be gone
  // with the ones we drained: put one back so the reactor does not nap.
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t put = ::write(event_fd_, &one, sizeof one);
  return false;
}

std::expected<ring_set, std::string> ring_set::create(unsigned cores, unsigned entries, bool deferred) {
  ring_set s;
  for (unsigned c = 0; c < cores; ++c) {
    auto r = core_ring::create(c, entries, deferred);
    if (!r) return std::unexpected(fmt::format("reactor {}: {}", c, r.error()));
    s.rings_.push_back(std::move(*r));
  }
  return s;
}

}  // namespace affine::drivers::uring
