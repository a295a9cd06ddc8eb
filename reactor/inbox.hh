#pragma once
// Remote-wakeup inbox: an intrusive multi-producer single-consumer queue
// (Vyukov's algorithm). Any thread pushes; only the owning reactor pops.
// Push is one atomic exchange and one store, never blocks, never allocates:
// the node lives inside the object being delivered (a fiber, a task).

#include <atomic>
#include <cstdint>

namespace affine::detail {

struct inbox_node {
  enum class kind : std::uint8_t { fiber_wake, timer_release, task, stub };
  std::atomic<inbox_node*> next{nullptr};
  kind what = kind::stub;
};

class mpsc_inbox {
 public:
  mpsc_inbox() : head_(&stub_), tail_(&stub_) {}
  mpsc_inbox(const mpsc_inbox&) = delete;
  mpsc_inbox& operator=(const mpsc_inbox&) = delete;

  // Any thread. Returns true when the queue looked empty before this push
  // (a hint for whether the consumer may need a kick).
  bool push(inbox_node* n) {
    n->next.store(nullptr, std::memory_order_relaxed);
    // seq_cst: the push and the kick's read of `sleeping` pair with the
    // sleeper's store of `sleeping` and its empty() (see kick()).
    inbox_node* prev = head_.exchange(n, std::memory_order_seq_cst);
    prev->next.store(n, std::memory_order_release);
    return prev == &stub_;
  }

  // Owner only. nullptr when empty, or when a producer is between its two
  // steps (the item becomes visible on a later pop: the caller re-polls).
  inbox_node* pop() {
    inbox_node* tail = tail_;
    inbox_node* next = tail->next.load(std::memory_order_acquire);
    if (tail == &stub_) {
      if (next == nullptr) return nullptr;
      tail_ = next;
      tail = next;
      next = next->next.load(std::memory_order_acquire);
    }
    if (next != nullptr) {
      tail_ = next;
      return tail;
    }
    if (tail != head_.load(std::memory_order_acquire)) return nullptr;
    push(&stub_);
    next = tail->next.load(std::memory_order_acquire);
    if (next != nullptr) {
      tail_ = next;
      return tail;
    }
    return nullptr;
  }

  // Any thread; exact only when producers are quiet.
  bool empty() const {
    return head_.load(std::memory_order_seq_cst) == &stub_ &&
           stub_.next.load(std::memory_order_acquire) == nullptr;
  }

 private:
  alignas(64) std::atomic<inbox_node*> head_;  // producers
  alignas(64) inbox_node* tail_;               // consumer
  inbox_node stub_;
};

}  // namespace affine::detail
