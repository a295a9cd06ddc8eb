#include "reactor/completion.hh"

#include <cassert>

#include "reactor/runtime_state.hh"

namespace affine::detail {

void completion::arm() {
  core_ctx* c = this_core();
  assert(c != nullptr && c->current != nullptr);
  fiber_ = c->current;
  word_.store(idle_word, std::memory_order_relaxed);
}

wake_reason completion::wait(std::uint64_t deadline_ns, stop_mode stop) {
  if (done()) return wake_reason::notified;
  const std::uint32_t gen = prepare_park();
  std::uint64_t expected = idle_word;
  const std::uint64_t waiting = std::uint64_t(gen) << 2 | waiting_bit;
  if (!word_.compare_exchange_strong(expected, waiting, std::memory_order_acq_rel)) {
    // Completed in between: do not sleep.
    fiber_->set_state(gen, phase::running);
    return wake_reason::notified;
  }
  const wake_reason why = park(gen, deadline_ns, stop);
  if (why == wake_reason::notified) return why;  // only complete() knows `gen`
  // Timed out or stopped: stop waiting, unless complete() got there first.
  expected = waiting;
  return word_.compare_exchange_strong(expected, idle_word, std::memory_order_acq_rel) ? why : wake_reason::notified;
}

void completion::complete(std::int32_t result) {
  // Copy before publishing: once the fiber sees done_word it may return and
  // this object (on its stack) is gone. The stack header outlives the fiber.
  fiber* f = fiber_;
  stack_header* header = f->header;
  result_ = result;
  const std::uint64_t prev = word_.exchange(done_word, std::memory_order_acq_rel);
  if ((prev & waiting_bit) != 0)
    try_wake(header, f, std::uint32_t(prev >> 2), wake_reason::notified, policy::waker_kind::completion);
}

}  // namespace affine::detail
