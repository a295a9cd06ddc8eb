#pragma once
// A kernel socket driven through the rings: runs one operation at a time per
// calling fiber (any number of fibers at once, e.g. a reader and a writer),
// with a deadline, and keeps the operations in flight so that close() can
// cancel them and wait until none refers to the socket or its buffers.

#include <cstdint>
#include <span>

#include "affine/sync.hh"
#include "drivers/uring/ring.hh"

namespace affine::drivers::uring {

// An operation that may have to end early, and the cancel that ends it.
struct cancellable {
  op* target = nullptr;
  op cancel;
};

// Precondition: in a fiber; each target armed and started on ring `core`.
// Cancels the targets not yet done there (a cancel reaches only its own
// ring, and the fiber may have been woken on another core), and waits
// until every target has ended and every cancel has been handled: from
// then on the kernel refers to none of them.
void cancel_and_wait(const ring_set& rings, unsigned core, std::span<cancellable> ops);

class ring_file {
 public:
  // Takes ownership of `fd`. `rings` outlives the file.
  ring_file(const ring_set& rings, int fd) : rings_(rings), fd_(fd) {}
  ~ring_file();  // closes the fd if close() was not called
  ring_file(const ring_file&) = delete;
  ring_file& operator=(const ring_file&) = delete;

  int fd() const { return fd_; }

  // Precondition: in a fiber. Submits `r` on the calling core's ring and
  // waits. Returns the CQE's result (>= 0, or -errno); -ETIMEDOUT when the
  // deadline passed first (the operation is cancelled and waited for: the
  // kernel refers to the caller's buffers until then); -ECANCELED when the
  // file is closed meanwhile or already, or (stop_mode::cancel) a stop
  // request on the fiber's token came first (cancelled and waited for too).
  int run(const request& r, std::uint64_t deadline_ns, stop_mode stop = stop_mode::cancel);

  // Cancels every operation in flight, waits until they have ended, and
  // closes the fd (through the ring in a fiber; directly off the reactors,
  // where nothing can be in flight). Idempotent.
  void close();
  // For operations that run alongside others of the same fiber (wait.cc),
  // in steps: enter() joins `o` to the operations in flight, so that
  // close() cancels it and waits for it (false when the file is closing:
  // nothing joined); o.core is the calling core. The caller then starts it
  // on that core's ring and waits for it (cancel_and_wait if need be), and
  // may start it again, each time after reenter() (false when the file is
  // closing: do not start it; o.core becomes the calling core), without
  // suspending in between. leave() takes it out and says whether the file
  // is closing. The fd stays open while `o` is in; after leave() the file
  // may be gone (a close() waited for it).
  bool enter(op& o);
  bool reenter(op& o);
  bool leave(op& o);
  const ring_set& rings() const { return rings_; }

  // The kernel's close of this fd may block (SO_LINGER with a time: it
  // waits for the unsent data): close() then runs it on an io_uring worker
  // thread, which blocks instead of the reactor. Before the file is shared.
  void close_may_block() { close_may_block_ = true; }

 private:
  // Submit and wait, without the in-flight bookkeeping (close uses it too).
  int submit_and_wait(op& o, const request& r, std::uint64_t deadline_ns, stop_mode stop);
  void link(op& o);
  void unlink(op& o);
  // Precondition: in a fiber. Cancel the operations submitted on `core`;
  // runs on that core (a cancel reaches only its own ring).
  void cancel_on(unsigned core);

  const ring_set& rings_;
  int fd_;
  bool close_may_block_ = false;
  spinlock lock_;  // guards the fields below
  bool closing_ = false;
  op* head_ = nullptr;  // operations in flight
  wait_queue drained_;  // close() waits here for head_ to empty
};

}  // namespace affine::drivers::uring
