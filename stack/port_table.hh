#pragma once
// Sockets by local port, for the RX path: one load and a reference per
// lookup, no lock and no scan (the port is the index). Writers (listen,
// close) are rare and serialize on a lock of their own. A removal clears
// the slot, then waits out a per-core grace period, in the spirit of RCU:
// each RX core's reader count is odd while it is between loading a slot and
// taking its reference, and the removal waits until every core it found
// odd has moved on, so the table's own reference can then be dropped
// without a reader still reaching for the socket.

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

namespace affine::stack {

template <class T>  // T has ref() and unref()
class port_table {
 public:
  explicit port_table(unsigned cores)
      : slots_(std::make_unique<std::atomic<T*>[]>(ports)), readers_(std::make_unique<reader[]>(cores)),
        cores_(cores) {}

  // On RX core `core`: the socket on `port`, with a reference; null if none.
  T* find(unsigned core, std::uint16_t port) {
    std::atomic<std::uint64_t>& r = readers_[core].count;
    r.fetch_add(1, std::memory_order_seq_cst);  // odd: reading
    T* s = slots_[port].load(std::memory_order_seq_cst);
    if (s != nullptr) s->ref();
    r.fetch_add(1, std::memory_order_release);
    return s;
  }

  // The writers' side, under their lock.
  bool bound(std::uint16_t port) const { return slots_[port].load(std::memory_order_relaxed) != nullptr; }
  // Takes `s`'s reference for the table; the port must be free.
  void insert(std::uint16_t port, T* s) { slots_[port].store(s, std::memory_order_release); }
  // Clears the slot if it holds `s`, and returns once no core can still be
  // taking a reference through it: the table's reference is then the
  // caller's to drop. False when the slot held something else.
  bool remove(std::uint16_t port, T* s) {
    T* expected = s;
    if (!slots_[port].compare_exchange_strong(expected, nullptr, std::memory_order_seq_cst)) return false;
    for (unsigned c = 0; c < cores_; ++c) {
      const std::uint64_t seen = readers_[c].count.load(std::memory_order_seq_cst);
      if (seen % 2 == 0) continue;
      while (readers_[c].count.load(std::memory_order_acquire) == seen) std::this_thread::yield();
    }
    return true;
  }
  template <class F>
  void for_each(F&& f) const {
    for (std::uint32_t p = 0; p < ports; ++p)
      if (T* s = slots_[p].load(std::memory_order_relaxed)) f(std::uint16_t(p), s);
  }

 private:
  static constexpr std::uint32_t ports = 65536;
  struct alignas(64) reader {
    std::atomic<std::uint64_t> count{0};
  };

  std::unique_ptr<std::atomic<T*>[]> slots_;
  std::unique_ptr<reader[]> readers_;  // one cache line per core
  unsigned cores_;
};

}  // namespace affine::stack
