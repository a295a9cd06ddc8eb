#pragma once
// 4-tuples to TCP sockets, shared by every core (DESIGN.md 2: a flow's
// packets may arrive on any RX queue, its fiber may run on any core).
// Sharded: each shard a spinlock and an open hash map, held only for the
// lookup itself. The table holds one reference per socket it maps.

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <unordered_map>

#include "affine/sync.hh"
#include "stack/flow.hh"
#include "stack/tcp_socket.hh"

namespace affine::stack {

class flow_table {
 public:
  explicit flow_table(std::size_t max_entries) : max_(max_entries) {}
  ~flow_table();  // drops the table's references
  flow_table(const flow_table&) = delete;
  flow_table& operator=(const flow_table&) = delete;

  // The socket of `t` with a reference for the caller, or empty.
  socket_ref find(const flow_tuple& t) const;
  // Maps `t` to `s` (taking a reference). False when `t` is taken or the
  // table is full (the connection limit).
  bool insert(const flow_tuple& t, tcp_socket* s);
  // Unmaps `t` if it maps to `s`; drops the table's reference.
  void erase(const flow_tuple& t, tcp_socket* s);
  bool contains(const flow_tuple& t) const;
  // Calls f(tuple, socket) for every entry, one shard locked at a time.
  template <class F>
  void for_each(F&& f) const {
    for (shard& sh : shards_) {
      std::lock_guard g(sh.lock);
      for (auto& [t, s] : sh.map) f(t, *s);
    }
  }
  std::size_t size() const { return size_.load(std::memory_order_relaxed); }
  std::size_t capacity() const { return max_; }

 private:
  static constexpr std::size_t shard_count = 64;
  struct alignas(64) shard {
    mutable spinlock lock;
    std::unordered_map<flow_tuple, tcp_socket*, flow_tuple_hash> map;
  };
  shard& shard_of(const flow_tuple& t) const { return shards_[flow_tuple_hash{}(t) % shard_count]; }

  std::size_t max_;
  std::atomic<std::size_t> size_{0};
  mutable std::array<shard, shard_count> shards_;
};

}  // namespace affine::stack
