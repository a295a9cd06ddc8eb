#pragma once
// The simulator's clock: a binary min-heap of small plain events over one
// vector. Storage grows to the largest number of pending events and is then
// reused, so the hot loop does not allocate. Ties in time go in insertion
// order (a sequence number), which makes a run deterministic.

#include <algorithm>
#include <cstdint>
#include <vector>

namespace affine::sim {

enum class event_kind : std::uint8_t {
  request_arrive,   // a: flow; a client's request reaches the NIC
  core_done,        // a: core, b: core generation; the core's current segment ends
  core_wake,        // a: core, b: generation; a sleeping core is out of its idle state
  spin_end,         // a: core, b: generation; an idle reactor stops spinning and sleeps
  poll_check,       // a: core, b: generation; a busy-polling fiber's budget or quota runs out
  wake_arrive,      // a: core, b: task; a remote wakeup reaches the core's inbox
  backlog_arrive,   // a: core; a batch handed over by RPS reaches the core (IPI)
  balance_tick,     // a: core; the core's periodic balance
  sched_tick,       // a: core; the kernel's scheduler tick (kernel.cfs: check_preempt_tick)
  load_tick,        // every core's decayed load and RX share are updated
  sample_tick,      // the utilization time series takes a sample
  open_arrival,     // the open-loop generator sends its next request
};

struct event {
  std::uint64_t time = 0;
  std::uint64_t seq = 0;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  event_kind kind = event_kind::request_arrive;
};

class event_queue {
 public:
  void reserve(std::size_t n) { heap_.reserve(n); }
  bool empty() const noexcept { return heap_.empty(); }
  std::size_t size() const noexcept { return heap_.size(); }

  void push(std::uint64_t time, event_kind kind, std::uint32_t a = 0, std::uint32_t b = 0) {
    heap_.push_back({time, seq_++, a, b, kind});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  // Precondition: not empty.
  event pop() noexcept {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const event e = heap_.back();
    heap_.pop_back();
    return e;
  }
  std::uint64_t next_time() const noexcept { return heap_.front().time; }

 private:
  static bool later(const event& x, const event& y) noexcept {
    return x.time != y.time ? x.time > y.time : x.seq > y.seq;
  }
  std::vector<event> heap_;
  std::uint64_t seq_ = 0;
};

}  // namespace affine::sim
