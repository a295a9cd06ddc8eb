#pragma once
// One fiber waiting for one completion delivered by a reactor-side poller
// (an io_uring CQE, a DPDK event). The fiber arms, starts the operation, and
// waits; the poller calls complete() from the reactor loop, which wakes the
// fiber with waker kind `completion` (placement decides where it resumes).
//
//   completion c;
//   c.arm();                       // before the operation can complete
//   submit(op, &c);                // the poller will call c.complete(res)
//   if (!c.wait(deadline)) { cancel(op); c.wait(no_deadline); }  // must not leave early:
//                                  // the operation still refers to our buffers
//
// complete() may run on any core, before or after wait() starts. Between
// arm() and the end of wait() the fiber must not block on anything else.

#include <atomic>
#include <cstdint>

#include "affine/sync.hh"

namespace affine::detail {

struct fiber;

class completion {
 public:
  // Precondition: in a fiber. Resets the result and registers the caller.
  void arm();
  // Precondition: armed by the calling fiber. True once completed; false if
  // the deadline passed first (the completion may still come: wait again).
  bool wait(std::uint64_t deadline_ns);
  // Any thread, once per arm(): records the result and wakes the fiber.
  void complete(std::int32_t result);

  bool done() const { return done_.load(std::memory_order_acquire); }
  std::int32_t result() const { return result_; }

 private:
  fiber* fiber_ = nullptr;
  std::uint32_t generation_ = 0;
  std::int32_t result_ = 0;
  std::atomic<bool> done_{false};
};

}  // namespace affine::detail
