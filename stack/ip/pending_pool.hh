#pragma once
// Packets that wait for their next hop's link-layer address (RFC 1122
// 2.3.2.2 for ARP, RFC 4861 7.2.2 for Neighbor Discovery): a FIFO list per
// address, threaded through one pool of places taken at construction, so
// that waiting never allocates and the total is bounded. The pool also
// keeps the list of packets that one call of its cache hands back (to send
// or to free). A call hands back no more than the pool held when it began
// (the caches push a packet only after their last hand-back of the call),
// so that list needs no more room than the pool has.
//
// Packets are opaque handles. Precondition: one owner (the cache that holds
// the lists).

#include <cassert>
#include <cstdint>
#include <span>
#include <vector>

struct rte_mbuf;

namespace affine::stack {

// One address's waiting packets; lives in the cache's entry.
struct pending_list {
  std::uint32_t queued = 0;
  std::uint32_t head = UINT32_MAX;
  std::uint32_t tail = UINT32_MAX;
};

class pending_pool {
 public:
  explicit pending_pool(std::uint32_t capacity) : packet_(capacity), next_(capacity), back_(capacity) {
    assert(capacity > 0);
    for (std::uint32_t i = 0; i < capacity; ++i) next_[i] = i + 1 < capacity ? i + 1 : nil;
  }

  bool full() const { return free_ == nil; }
  std::uint32_t size() const { return pending_; }

  // Starts a call of the owning cache: what the last call handed back is
  // forgotten.
  void begin_call() { back_count_ = 0; }
  // What this call handed back, each list's packets oldest first. Valid
  // until the next begin_call().
  std::span<rte_mbuf* const> handed_back() const { return {back_.data(), back_count_}; }

  // Appends `packet` to `l`. At `per_entry` packets, or with the pool full,
  // the oldest packet of `l` gives way ("SHOULD save at least one (the
  // latest) packet", RFC 1122 2.3.2.2; "the new arrival SHOULD replace the
  // oldest entry", RFC 4861 7.2.2): it is handed back and counted in
  // `drop_per_entry` or `drop_total`, after the bound that made it go.
  // Precondition: `l` holds a packet or the pool has room.
  void enqueue(pending_list& l, rte_mbuf* packet, std::uint32_t per_entry, std::uint64_t& drop_per_entry,
               std::uint64_t& drop_total) {
    if (l.queued == per_entry) {
      hand_back(pop(l));
      ++drop_per_entry;
    } else if (full()) {
      assert(l.queued > 0);
      hand_back(pop(l));
      ++drop_total;
    }
    push(l, packet);
  }

  // Precondition: the pool has room.
  void push(pending_list& l, rte_mbuf* packet) {
    const std::uint32_t i = free_;
    assert(i != nil);
    free_ = next_[i];
    packet_[i] = packet;
    next_[i] = nil;
    (l.tail == nil ? l.head : next_[l.tail]) = i;
    l.tail = i;
    ++l.queued;
    ++pending_;
  }

  // Hands back every packet of `l`, oldest first; returns how many.
  std::uint32_t release(pending_list& l) {
    const std::uint32_t n = l.queued;
    while (l.queued > 0) hand_back(pop(l));
    return n;
  }

 private:
  static constexpr std::uint32_t nil = UINT32_MAX;

  // The oldest packet of `l`. Precondition: l.queued > 0.
  rte_mbuf* pop(pending_list& l) {
    const std::uint32_t i = l.head;
    l.head = next_[i];
    if (l.head == nil) l.tail = nil;
    --l.queued;
    --pending_;
    next_[i] = free_;
    free_ = i;
    return packet_[i];
  }

  void hand_back(rte_mbuf* packet) {
    assert(back_count_ < back_.size());
    back_[back_count_++] = packet;
  }

  std::vector<rte_mbuf*> packet_;
  std::vector<std::uint32_t> next_;
  std::uint32_t free_ = 0;
  std::uint32_t pending_ = 0;
  std::vector<rte_mbuf*> back_;
  std::uint32_t back_count_ = 0;
};

}  // namespace affine::stack
