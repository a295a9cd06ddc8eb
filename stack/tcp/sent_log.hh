#pragma once
// The SACK sender's record of what it sent and when (RFC 8985 needs a
// transmit time per segment): one record per segment transmitted, in
// sequence order, from SND.UNA to SND.MAX. A retransmission updates the
// records it covers rather than adding one, so the log holds at most the
// segments of one flight. The bytes stay in the send ring; a record is a
// range, a time and three marks.
//
// The number of records has a bound (DESIGN.md 4): at the bound a new
// transmission joins the last record, which then looks sent later than
// part of it was. That only delays loss detection for it, never invents a
// loss. Storage grows as the flight does, from nothing: a connection that
// never sent holds none.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "stack/wire/seq32.hh"

namespace affine::stack::tcp {

struct sent_record {
  seq32 begin, end;              // [begin, end) of sequence space (a FIN counts)
  std::uint64_t xmit_ns = 0;     // its latest transmission
  std::uint32_t lost_bytes = 0;  // marked lost: its un-SACKed bytes (0: not lost)
  bool retransmitted = false;    // sent more than once
  bool sacked = false;           // every byte SACKed: delivered
  std::uint32_t length() const { return std::uint32_t(end - begin); }
};

class sent_log {
 public:
  explicit sent_log(std::size_t max_records = 8192) : max_(max_records < 2 ? 2 : max_records) {}

  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::size_t max_records() const { return max_; }
  sent_record& operator[](std::size_t i) { return slots_[(head_ + i) & (capacity_ - 1)]; }
  const sent_record& operator[](std::size_t i) const { return slots_[(head_ + i) & (capacity_ - 1)]; }
  sent_record& front() { return (*this)[0]; }
  sent_record& back() { return (*this)[count_ - 1]; }
  const sent_record& back() const { return (*this)[count_ - 1]; }

  // The index of the first record that ends after `s` (size() when none):
  // records are in sequence order, so this is a binary search.
  std::size_t first_ending_after(seq32 s) const;
  // A transmission of [begin, end) at `now` that no record covers yet
  // (begin at or past the last record's end). False when it joined the
  // last record instead, the log being at its bound.
  bool append(seq32 begin, seq32 end, std::uint64_t now_ns);
  void pop_front() {
    head_ = (head_ + 1) & (capacity_ - 1);
    --count_;
  }
  void clear() { count_ = head_ = 0; }

 private:
  void grow();

  std::unique_ptr<sent_record[]> slots_;
  std::size_t capacity_ = 0;  // a power of two, or 0 before the first record
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  std::size_t max_;
};

}  // namespace affine::stack::tcp
