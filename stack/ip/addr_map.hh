#pragma once
// A fixed-capacity map from an address to a value, for the per-address
// tables of the IP layer (ARP cache, path-MTU cache, neighbor cache). The
// key is an IPv4 address (std::uint32_t, the default) or an IPv6 one
// (ipv6_bytes): any type with == and an addr_hash() overload below. All
// memory is taken at construction and nothing allocates afterwards, so a
// full table says so (insert returns nullptr) and its owner decides what
// to evict.
//
// Values live in a slot array with stable places; an open-addressing index
// maps addresses to slots. The index has at least twice as many cells as the
// map has slots, so probe runs stay short, and deletion shifts the cells
// after the hole back instead of leaving tombstones, so a table that churns
// (an ARP cache under a scan) never slows down.

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "base/xoshiro.hh"

namespace affine::stack {

// 32 bits that spread a key's values over the whole index (which takes
// their top bits). IPv4: Fibonacci hashing, the top bits of key * 2^32/phi,
// spread consecutive addresses (a subnet) over the index. IPv6: the
// interface identifier goes through splitmix64's finalizer, whose every
// output bit depends on every input bit, then the prefix with it, so that
// link-local neighbors (one prefix, identifiers that differ in any byte)
// spread as random keys would; a plain multiply chain leaves some bytes
// few top bits to vary (tests/stack/ip/addr_map_test.cc).
inline std::uint32_t addr_hash(std::uint32_t key) { return key * 0x9e3779b9u; }
inline std::uint32_t addr_hash(const std::array<std::uint8_t, 16>& key) {
  std::uint64_t hi = 0, lo = 0;
  std::memcpy(&hi, key.data(), 8);
  std::memcpy(&lo, key.data() + 8, 8);
  return std::uint32_t(mix64(hi ^ mix64(lo)) >> 32);
}

template <class T, class Key = std::uint32_t>
class addr_map {
 public:
  explicit addr_map(std::uint32_t capacity)
      : slots_(capacity), free_(capacity), cells_(std::bit_ceil(std::max(2 * capacity, 2u))),
        mask_(std::uint32_t(cells_.size() - 1)), shift_(32 - std::countr_zero(std::uint32_t(cells_.size()))) {
    assert(capacity > 0 && capacity < (1u << 30));
    for (std::uint32_t i = 0; i < capacity; ++i) free_[i] = capacity - 1 - i;
    free_count_ = capacity;
  }

  std::uint32_t size() const { return std::uint32_t(slots_.size()) - free_count_; }
  std::uint32_t capacity() const { return std::uint32_t(slots_.size()); }
  bool full() const { return free_count_ == 0; }

  T* find(const Key& key) {
    const std::uint32_t s = cells_[locate(key)].slot;
    return s == empty ? nullptr : &slots_[s].value;
  }
  const T* find(const Key& key) const {
    const std::uint32_t s = cells_[locate(key)].slot;
    return s == empty ? nullptr : &slots_[s].value;
  }

  // Adds `key` with a value-initialized T; nullptr when the map is full.
  // Precondition: `key` is absent.
  T* insert(const Key& key) {
    if (full()) return nullptr;
    cell& c = cells_[locate(key)];
    assert(c.slot == empty);
    const std::uint32_t s = free_[--free_count_];
    c = {key, s};
    slots_[s] = {key, true, T{}};
    return &slots_[s].value;
  }

  // Precondition: `key` is present.
  void erase(const Key& key) {
    std::uint32_t i = locate(key);
    assert(cells_[i].slot != empty);
    release(cells_[i].slot);
    // Backward-shift deletion: a later cell of the probe run moves into the
    // hole unless its home lies cyclically after the hole.
    for (std::uint32_t j = (i + 1) & mask_; cells_[j].slot != empty; j = (j + 1) & mask_) {
      const std::uint32_t home = home_of(cells_[j].key);
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        cells_[i] = cells_[j];
        i = j;
      }
    }
    cells_[i].slot = empty;
  }

  // The key of the entry whose value orders first under before(a, b) (the
  // first in slot order among equals); nullopt when the map is empty. The
  // owners' eviction choice.
  template <class Before>
  std::optional<Key> first_by(Before&& before) const {
    const slot* best = nullptr;
    for (const slot& s : slots_)
      if (s.live && (best == nullptr || before(s.value, best->value))) best = &s;
    if (best == nullptr) return std::nullopt;
    return best->key;
  }

  // Calls f(key, value) for every entry and erases those for which it
  // returns true.
  template <class F>
  void erase_if(F&& f) {
    for (slot& s : slots_)
      if (s.live && f(s.key, s.value)) erase(s.key);
  }

 private:
  static constexpr std::uint32_t empty = UINT32_MAX;

  struct slot {
    Key key{};
    bool live = false;
    T value{};
  };
  struct cell {
    Key key{};
    std::uint32_t slot = empty;
  };

  // The top bits of the key's hash.
  std::uint32_t home_of(const Key& key) const { return addr_hash(key) >> shift_; }

  // The cell holding `key`, or the empty cell where it would go.
  std::uint32_t locate(const Key& key) const {
    std::uint32_t i = home_of(key);
    while (cells_[i].slot != empty && cells_[i].key != key) i = (i + 1) & mask_;
    return i;
  }

  void release(std::uint32_t s) {
    slots_[s].live = false;
    free_[free_count_++] = s;
  }

  std::vector<slot> slots_;
  std::vector<std::uint32_t> free_;  // a stack of free slot numbers
  std::uint32_t free_count_ = 0;
  std::vector<cell> cells_;
  std::uint32_t mask_;
  int shift_;
};

}  // namespace affine::stack
