#pragma once
// A byte ring of fixed capacity: the send and receive queues of a TCP
// connection. Its storage is allocated once, when the first byte is put in
// (not at construction, and not zeroed): a connection that has never
// carried data holds none, one that carried a little has touched a page or
// two of it, as Linux's socket buffers cost nothing until an skb is queued.
// Nothing allocates after that, unless the owner grows it (grow(): the
// buffers' auto-tuning, buffer_tuning.cc).
//
// The receive side also holds out-of-order data (RFC 9293 3.10.7.4: segments
// beyond RCV.NXT may be kept for later delivery): write_at() places bytes in
// the free space past the readable data without making them readable, and
// commit() makes them readable once the hole before them is filled.

#include <cstddef>
#include <memory>
#include <span>

namespace affine::stack::tcp {

class ring_buffer {
 public:
  explicit ring_buffer(std::size_t capacity);  // capacity 0 is allowed
  ~ring_buffer();
  ring_buffer(ring_buffer&& other) noexcept;
  ring_buffer& operator=(ring_buffer&& other) noexcept;
  ring_buffer(const ring_buffer&) = delete;
  ring_buffer& operator=(const ring_buffer&) = delete;

  std::size_t capacity() const { return capacity_; }
  std::size_t size() const { return size_; }
  std::size_t free() const { return capacity_ - size_; }
  bool empty() const { return size_ == 0; }

  // Appends up to free() bytes; returns the number taken.
  std::size_t write(std::span<const std::byte> data);
  // Pops up to out.size() bytes from the front; returns the number copied.
  std::size_t read(std::span<std::byte> out);
  // Copies from front+offset without popping; returns the number copied.
  std::size_t peek(std::size_t offset, std::span<std::byte> out) const;
  // The readable bytes at front+offset, up to the wrap point or `max`,
  // whichever comes first (empty when offset >= size()).
  std::span<const std::byte> contiguous_at(std::size_t offset, std::size_t max) const;
  // Drops n bytes from the front. Precondition: n <= size().
  void consume(std::size_t n);

  // Writes into the free space `offset` bytes past the end of the readable
  // data, without making it readable. Returns the bytes written, bounded by
  // free() - offset (0 when offset >= free()).
  std::size_t write_at(std::size_t offset, std::span<const std::byte> data);
  // Makes n more bytes readable. Precondition: n <= free().
  void commit(std::size_t n);
  // The free space right after the readable data, up to the wrap point or
  // `max`, whichever comes first: where write() puts its next bytes. Bytes
  // placed there beforehand and written from where they lie are not copied
  // again (the RX path copies a segment's payload there as it checks its sum).
  std::span<std::byte> free_contiguous(std::size_t max);
  void clear();
  // A larger capacity, every byte kept at its place relative to the front:
  // the readable ones and those write_at() put past them. Existing storage
  // is copied into a new allocation (spans handed out before are invalid
  // after); none is made for a ring that has none. Smaller: nothing.
  void grow(std::size_t capacity);

  // Whether the storage exists (the first write_at/free_contiguous made it).
  bool allocated() const { return data_ != nullptr; }

  // Total capacity of all live ring_buffers, for leak checks in tests.
  static std::size_t live_bytes();
  // Total storage of all live ring_buffers that have any.
  static std::size_t allocated_bytes();

 private:
  // The storage, allocated on first use. Precondition: capacity_ > 0.
  std::byte* storage();
  // Copies data into the ring starting at physical index `at`, wrapping.
  void copy_in(std::size_t at, std::span<const std::byte> data);
  // Copies out.size() bytes from physical index `at` into out, wrapping.
  void copy_out(std::size_t at, std::span<std::byte> out) const;
  std::size_t wrap(std::size_t index) const { return index >= capacity_ ? index - capacity_ : index; }

  std::unique_ptr<std::byte[]> data_;
  std::size_t capacity_ = 0;
  std::size_t head_ = 0;  // physical index of the first readable byte
  std::size_t size_ = 0;  // readable bytes
};

}  // namespace affine::stack::tcp
