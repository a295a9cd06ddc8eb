#pragma once
// Bookkeeping for the out-of-order queue: which byte ranges past RCV.NXT have
// arrived (RFC 9293 3.10.7.4 allows keeping segments beyond RCV.NXT for later
// delivery). The bytes themselves sit in the receive ring_buffer (write_at);
// this records where they are. Ranges are kept sorted, disjoint and
// non-adjacent, with offsets counted from the current front (RCV.NXT).
//
// The number of ranges has a fixed bound (DESIGN.md 4: every resource has a
// bound); the storage is allocated once at construction.

#include <cstddef>
#include <memory>
#include <span>
#include <utility>

namespace affine::stack::tcp {

class assembler {
 public:
  using range = std::pair<std::size_t, std::size_t>;  // (offset, length)

  explicit assembler(std::size_t max_ranges = 32);

  enum class add_result { added, duplicate, too_many_ranges };
  // Records that [offset, offset+len) arrived. `duplicate` when no byte is
  // new (len 0 included); `too_many_ranges` leaves the ranges unchanged.
  add_result add(std::size_t offset, std::size_t len);
  // If data starts at offset 0, removes that range and returns its length
  // (the front advances by it); 0 otherwise.
  std::size_t take_front();
  // The front advanced by n because n in-order bytes were delivered directly;
  // ranges below the new front are dropped or trimmed.
  void advance(std::size_t n);

  bool empty() const { return count_ == 0; }
  std::size_t range_count() const { return count_; }
  std::size_t max_ranges() const { return max_ranges_; }
  // The ranges in order, as (offset, length); valid until the next change.
  std::span<const range> ranges() const { return {ranges_.get(), count_}; }
  void clear() { count_ = 0; }

 private:
  void erase(std::size_t first, std::size_t count);
  std::span<range> live() { return {ranges_.get(), count_}; }

  std::unique_ptr<range[]> ranges_;
  std::size_t max_ranges_;
  std::size_t count_ = 0;
};

}  // namespace affine::stack::tcp
