#pragma once
// A core's run queue: a lock-free ring that the owner pushes and pops and
// that idle cores may steal from (the Go runtime's runq shape), an owner-only
// overflow list behind it, and an owner-only list of pinned fibers (never
// stolen). FIFO overall: the ring always holds older fibers than the
// overflow, and a pinned fiber remembers the ring position current when it
// was queued, so it runs after the ring entries queued before it. (While the
// ring overflows, overflowed fibers count as queued when they enter the
// ring: a bounded unfairness past 256 runnable fibers.)

#include <array>
#include <atomic>
#include <cstdint>

#include "reactor/fiber.hh"

namespace affine::detail {

class run_queue {
 public:
  static constexpr std::uint32_t ring_size = 256;

  // Owner only.
  void push(fiber* f) {
    if (f->pinned || f->hold_once) {
      f->ring_pos = tail_.load(std::memory_order_relaxed);
      pinned_.push_back(f);
      return;
    }
    if (overflow_.empty()) {
      const std::uint32_t t = tail_.load(std::memory_order_relaxed);
      if (t - head_.load(std::memory_order_acquire) < ring_size) {
        ring_[t % ring_size].store(f, std::memory_order_relaxed);
        tail_.store(t + 1, std::memory_order_release);
        return;
      }
    }
    overflow_.push_back(f);
  }

  // Owner only: the oldest runnable fiber, or nullptr.
  fiber* pop() {
    fiber* p = pinned_.front();
    if (p != nullptr && std::int32_t(head_.load(std::memory_order_acquire) - p->ring_pos) >= 0) {
      pinned_.pop_front();
      return p;
    }
    fiber* f = take_ring();
    if (f == nullptr) f = overflow_.pop_front();  // ring emptied by thieves
    refill();
    return f;
  }

  // Any core: take the oldest stealable fiber, or nullptr.
  fiber* steal() { return take_ring(); }

  // Any core, approximate: runnable fibers queued here (not the running one).
  std::uint32_t size() const {
    const std::uint32_t h = head_.load(std::memory_order_relaxed);
    const std::uint32_t t = tail_.load(std::memory_order_relaxed);
    return (t - h) + overflow_.size() + pinned_.size();
  }
  bool empty() const { return size() == 0; }

 private:
  fiber* take_ring() {
    std::uint32_t h = head_.load(std::memory_order_acquire);
    for (;;) {
      if (h == tail_.load(std::memory_order_acquire)) return nullptr;
      fiber* f = ring_[h % ring_size].load(std::memory_order_relaxed);
      if (head_.compare_exchange_weak(h, h + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
        return f;
    }
  }
  void refill() {
    while (!overflow_.empty()) {
      const std::uint32_t t = tail_.load(std::memory_order_relaxed);
      if (t - head_.load(std::memory_order_acquire) >= ring_size) return;
      ring_[t % ring_size].store(overflow_.pop_front(), std::memory_order_relaxed);
      tail_.store(t + 1, std::memory_order_release);
    }
  }

  // Owner-only FIFO through fiber::next_local, with a relaxed atomic count so
  // other cores can read the queue length.
  class local_list {
   public:
    void push_back(fiber* f) {
      f->next_local = nullptr;
      (tail_ ? tail_->next_local : head_) = f;
      tail_ = f;
      count_.store(count_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    fiber* front() const { return head_; }
    fiber* pop_front() {
      fiber* f = head_;
      if (f == nullptr) return nullptr;
      head_ = f->next_local;
      if (head_ == nullptr) tail_ = nullptr;
      count_.store(count_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
      return f;
    }
    bool empty() const { return head_ == nullptr; }
    std::uint32_t size() const { return count_.load(std::memory_order_relaxed); }

   private:
    fiber* head_ = nullptr;
    fiber* tail_ = nullptr;
    std::atomic<std::uint32_t> count_{0};
  };

  alignas(64) std::atomic<std::uint32_t> head_{0};  // consumers (owner and thieves)
  alignas(64) std::atomic<std::uint32_t> tail_{0};  // producer (owner)
  std::array<std::atomic<fiber*>, ring_size> ring_{};
  local_list overflow_;
  local_list pinned_;
};

}  // namespace affine::detail
