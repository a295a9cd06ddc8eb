#pragma once
// Packets that wait for their next hop's link-layer address (RFC 1122
// 2.3.2.2 for ARP, RFC 4861 7.2.2 for Neighbor Discovery): a FIFO list per
// address, threaded through one pool of places taken at construction, so
// that waiting never allocates and the total is bounded. Packets are opaque
// handles. Precondition: one owner (the cache that holds the lists).

#include <cassert>
#include <cstdint>
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
  enum class bound : std::uint8_t { none, per_entry, total };
  // What enqueue() pushed out to make room: the list's oldest packet, to
  // free, and the bound that made it go.
  struct pushed_out {
    rte_mbuf* packet = nullptr;
    bound reason = bound::none;
  };

  explicit pending_pool(std::uint32_t capacity) : packet_(capacity), next_(capacity) {
    assert(capacity > 0);
    for (std::uint32_t i = 0; i < capacity; ++i) next_[i] = i + 1 < capacity ? i + 1 : nil;
  }

  bool full() const { return free_ == nil; }
  std::uint32_t size() const { return pending_; }

  // Appends `packet` to `l`; at `per_entry` packets, or with the pool full,
  // the oldest packet of `l` gives way ("SHOULD save at least one (the
  // latest) packet"). Precondition: `l` holds a packet or the pool has room.
  pushed_out enqueue(pending_list& l, rte_mbuf* packet, std::uint32_t per_entry) {
    pushed_out out;
    if (l.queued == per_entry) {
      out = {pop(l), bound::per_entry};
    } else if (full()) {
      assert(l.queued > 0);
      out = {pop(l), bound::total};
    }
    push(l, packet);
    return out;
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

 private:
  static constexpr std::uint32_t nil = UINT32_MAX;

  std::vector<rte_mbuf*> packet_;
  std::vector<std::uint32_t> next_;
  std::uint32_t free_ = 0;
  std::uint32_t pending_ = 0;
};

}  // namespace affine::stack
