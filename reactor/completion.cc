#include "reactor/completion.hh"

#include <cassert>

#include "reactor/runtime_state.hh"

namespace affine::detail {

void completion::arm() {
  core_ctx* c = this_core();
  assert(c != nullptr && c->current != nullptr);
  fiber_ = c->current;
  done_.store(false, std::memory_order_relaxed);
}

bool completion::wait(std::uint64_t deadline_ns) {
  for (;;) {
    // Park first, then look: a complete() between the two finds us parking
    // and makes park() return at once.
    // prepare_park's store and this load of done_ are seq_cst, as are
    // complete()'s store of done_ and load of the state (Dekker).
    const std::uint32_t gen = prepare_park();
    generation_ = gen;
    if (done_.load(std::memory_order_seq_cst)) {
      fiber_->set_state(gen, phase::running);
      return true;
    }
    if (park(gen, deadline_ns) == wake_reason::timeout) return done();
    if (done()) return true;
  }
}

void completion::complete(std::int32_t result) {
  result_ = result;
  fiber* f = fiber_;
  done_.store(true, std::memory_order_seq_cst);
  // The generation read after `done` is published: if the fiber has not
  // parked yet it will see `done` and not sleep; if it parked, this is the
  // generation it parked in.
  const std::uint32_t gen = f->header->state.load(std::memory_order_seq_cst) >> generation_shift;
  try_wake(f->header, f, gen, wake_reason::notified, policy::waker_kind::completion);
}

}  // namespace affine::detail
