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
    inbox_node* prev = publish(n);
    link(prev, n);
    return prev == &stub_;
  }

  // The two steps of push(), apart so that a test can stop a producer
  // between them, as the OS or the hypervisor sometimes does: publish()
  // makes n the newest node, link() chains it behind the one before.
  inbox_node* publish(inbox_node* n) {
    n->next.store(nullptr, std::memory_order_relaxed);
    // seq_cst: the push and the kick's read of `sleeping` pair with the
    // sleeper's store of `sleeping` and its empty() (see kick()).
    return head_.exchange(n, std::memory_order_seq_cst);
  }
  static void link(inbox_node* prev, inbox_node* n) { prev->next.store(n, std::memory_order_release); }

  // Owner only. nullptr when empty, or when a producer is between its two
  // steps (the item becomes visible on a later pop: the caller re-polls).
  inbox_node* pop() {
    inbox_node* tail = tail_.load(std::memory_order_relaxed);
    inbox_node* next = tail->next.load(std::memory_order_acquire);
    if (tail == &stub_) {
      if (next == nullptr) return nullptr;
      tail_.store(next, std::memory_order_relaxed);
      tail = next;
      next = next->next.load(std::memory_order_acquire);
    }
    if (next != nullptr) {
      tail_.store(next, std::memory_order_relaxed);
      return tail;
    }
    if (tail != head_.load(std::memory_order_acquire)) return nullptr;
    push(&stub_);
    next = tail->next.load(std::memory_order_acquire);
    if (next != nullptr) {
      tail_.store(next, std::memory_order_relaxed);
      return tail;
    }
    return nullptr;
  }

  // Owner only (its loop, or its tick handler): nothing queued and nothing
  // on its way. The consumer's tail counts: when a producer stops between
  // publish() and link() while pop() puts the stub back, head_ is the stub
  // again, with the stub's next empty, while the producer's node and the
  // one before it still wait behind tail_. Without it the reactor saw an
  // empty inbox, slept, and no kick came: the producer had kicked while
  // the reactor was awake (a hang of sync_api.MutexSerialisesFibersOnBothCores
  // in 1 of some 100 runs here; tests/reactor/inbox_test.cc).
  bool empty() const {
    return tail_.load(std::memory_order_relaxed) == &stub_ && head_.load(std::memory_order_seq_cst) == &stub_ &&
           stub_.next.load(std::memory_order_acquire) == nullptr;
  }

 private:
  alignas(64) std::atomic<inbox_node*> head_;  // producers
  alignas(64) std::atomic<inbox_node*> tail_;  // the consumer's (atomic: its tick handler reads it too)
  inbox_node stub_;
};

}  // namespace affine::detail
