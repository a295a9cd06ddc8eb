#pragma once
// Everything a reactor polls (RX queues, backlog rings, io_uring completion
// queues) implements this one interface (Seastar's pollfn).

namespace affine {

class poller {
 public:
  virtual ~poller() = default;
  // Do a bounded amount of work; return how many items were handled (0 = idle).
  virtual unsigned poll() = 0;
  // Send what was batched during this loop turn (TX flush rung); return how
  // many items went out.
  virtual unsigned flush() { return 0; }
  // The reactor is about to sleep: arm interrupts and return true, or return
  // false if work arrived meanwhile (or interrupts are not supported, in which
  // case the reactor sleeps with a short timeout and polls again).
  virtual bool try_enter_interrupt_mode() { return false; }
  // The reactor woke up: disarm interrupts.
  virtual void exit_interrupt_mode() {}
  // A file descriptor that becomes readable when interrupt mode is armed and
  // work arrives; -1 when there is none.
  virtual int interrupt_fd() const { return -1; }
  // A backlog ring (packets another core handed over, RPS): its work is
  // counted on the loop's backlog rung, an RX queue's on the poll rung.
  virtual bool is_backlog() const { return false; }
};

}  // namespace affine
