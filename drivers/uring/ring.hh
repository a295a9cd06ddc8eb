#pragma once
// One io_uring per reactor core, polled by that core's reactor like any other
// poller (DESIGN.md section 2, the kernel-socket column).
//
// Threads: a ring is touched only by its core's reactor thread, by fibers
// running there (which submit) and by the reactor's poll/flush (which reap
// and submit). A fiber submits on the ring of the core it runs on at that
// moment; the completion may wake it on another core (placement decides),
// so a later cancel of that operation must go back to the ring it is on:
// io_uring cancels only within one ring. Where the kernel allows it the ring
// is made with IORING_SETUP_SINGLE_ISSUER | COOP_TASKRUN: its reactor
// thread is its one submitter (it enables the ring in attach()), and the
// kernel's task work for it runs when the reactor next enters the kernel
// (poll() asks for completions when the task-run flag says some wait).

#include <liburing.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "affine/poller.hh"
#include "affine/sync.hh"
#include "reactor/completion.hh"

namespace affine::drivers::uring {

// One operation in flight. The SQE's user_data points here; the reactor that
// reaps its CQE completes it. Lives on the waiting fiber's stack.
struct op {
  detail::completion done;
  unsigned core = 0;  // the ring it was submitted on
  op* prev = nullptr;  // the owning socket's in-flight list
  op* next = nullptr;
  // Set just before `done` completes: the fiber waits for the first of
  // several operations (wait.cc), not for this one alone.
  event* first_of = nullptr;
};

// What to submit, described once so that one switch prepares every kind.
struct request {
  enum class kind : std::uint8_t { accept, connect, recv, send, recvmsg, sendmsg, shutdown, close, poll };
  kind what = kind::recv;
  void* buf = nullptr;       // recv/send: the data; accept/connect: the sockaddr; *msg: the msghdr
  std::size_t len = 0;       // recv/send: bytes; connect: the sockaddr's size
  socklen_t* addr_len = nullptr;  // accept: in/out size of `buf`
  int flags = 0;             // recv/send/recvmsg/sendmsg: MSG_*; accept: SOCK_*; shutdown: SHUT_*; poll: POLL*
  bool async = false;        // IOSQE_ASYNC: run on an io-wq worker thread (a call that may block)
};

class core_ring final : public poller {
 public:
  // Any thread: the ring is not tied to the thread that creates it.
  // `deferred`: ask for deferred task work (a kernel that refuses it gets
  // the ring without, as does false; install_options holds the default).
  static std::expected<std::unique_ptr<core_ring>, std::string> create(unsigned core, unsigned entries,
                                                                       bool deferred);
  ~core_ring() override;
  core_ring(const core_ring&) = delete;
  core_ring& operator=(const core_ring&) = delete;

  unsigned core() const { return core_; }
  // Made with SINGLE_ISSUER | COOP_TASKRUN: task work deferred to the reactor's next kernel entry.
  bool deferred() const { return deferred_; }

  // Precondition: on this ring's reactor thread (attach/detach in a fiber
  // pinned there). Registers with the reactor: its poller list and its
  // epoll set, so that a reactor with only uring work sleeps in the kernel.
  std::expected<void, std::string> attach();
  void detach();

  // Precondition: in a fiber on this ring's core, `o` armed. Queues the SQE
  // and submits it at once unless another fiber is runnable here (then the
  // last of them, or the TX-flush rung, submits the batch). 0, or -errno
  // when the submission queue is full and cannot be drained.
  int start(op& o, int fd, const request& r);
  // Precondition: on this ring's reactor thread. Queues an
  // IORING_OP_ASYNC_CANCEL for `target`, which this ring must still be
  // waiting for (or have just completed); submit() sends it. Its own CQE
  // completes `notify` when given. False when no SQE could be had even
  // after submitting (the target then ends on its own: data, close, reset).
  bool prepare_cancel(const op& target, op* notify = nullptr);
  void submit();

  unsigned poll() override;
  unsigned flush() override;
  bool try_enter_interrupt_mode() override;
  int interrupt_fd() const override { return event_fd_; }

 private:
  core_ring(unsigned core, int event_fd) : core_(core), event_fd_(event_fd) { ring_.ring_fd = -1; }
  io_uring_sqe* next_sqe();
  // Deferred task work waits for the next io_uring_enter that asks for
  // completions.
  bool work_pending() const {
    return deferred_ && (IO_URING_READ_ONCE(*ring_.sq.kflags) & IORING_SQ_TASKRUN) != 0;
  }

  io_uring ring_{};
  unsigned core_;
  int event_fd_;
  int epoll_fd_ = -1;  // the reactor's, while attached
  std::size_t in_flight_ = 0;  // started, not yet reaped: zero at teardown
  bool deferred_ = false;  // IORING_SETUP_COOP_TASKRUN: task work runs at the next kernel entry (poll())
  bool enabled_ = false;   // a deferred ring is enabled by its reactor thread
};

// The rings of every reactor core, indexed by reactor index.
class ring_set {
 public:
  static std::expected<ring_set, std::string> create(unsigned cores, unsigned entries, bool deferred);
  core_ring& on(unsigned core) const { return *rings_[core]; }
  unsigned size() const { return unsigned(rings_.size()); }

 private:
  std::vector<std::unique_ptr<core_ring>> rings_;
};

}  // namespace affine::drivers::uring
