#pragma once
// One fiber waiting for one completion delivered by a reactor-side poller
// (an io_uring CQE, a DPDK event). The fiber arms, starts the operation, and
// waits; the poller calls complete() from the reactor loop, which wakes the
// fiber with waker kind `completion` (placement decides where it resumes).
//
//   completion c;
//   c.arm();                       // before the operation can complete
//   submit(op, &c);                // the poller will call c.complete(res)
//   if (c.wait(deadline) != notified) { cancel(op); c.wait(no_deadline); }  // must not leave early:
//                                  // the operation still refers to our buffers
//
// complete() may run on any core, before or after wait() starts. One atomic
// word carries the whole handshake, so complete() wakes the fiber only while
// it is waiting here, in the generation it parked in, never a later,
// unrelated wait of the same fiber.

#include <atomic>
#include <cstdint>

#include "affine/sync.hh"
#include "reactor/fiber.hh"

namespace affine::detail {

class completion {
 public:
  // Precondition: in a fiber. Resets the state and registers the caller.
  void arm();
  // Precondition: armed by the calling fiber. notified once completed;
  // timeout if the deadline passed first, canceled if (stop_mode::cancel) a
  // stop request came first: the completion may still come, wait again.
  wake_reason wait(std::uint64_t deadline_ns, stop_mode stop = stop_mode::ignore);
  // Any thread, once per arm(): records the result and wakes the fiber.
  void complete(std::int32_t result);

  bool done() const { return word_.load(std::memory_order_acquire) == done_word; }
  std::int32_t result() const { return result_; }

 private:
  // idle_word: armed, nobody waiting; done_word: completed;
  // generation << 2 | waiting_bit: the fiber is parked in that generation.
  static constexpr std::uint64_t idle_word = 0;
  static constexpr std::uint64_t done_word = 1;
  static constexpr std::uint64_t waiting_bit = 2;

  fiber* fiber_ = nullptr;
  std::int32_t result_ = 0;
  std::atomic<std::uint64_t> word_{idle_word};
};

}  // namespace affine::detail
