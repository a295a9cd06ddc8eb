#include "stack/tcp/ring_buffer.hh"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>
#include <utility>

namespace affine::stack::tcp {

namespace {
// Rings are built and destroyed on any reactor core, hence atomic.
std::atomic<std::size_t> g_live_bytes{0};
std::atomic<std::size_t> g_allocated_bytes{0};
}  // namespace

ring_buffer::ring_buffer(std::size_t capacity)
    : capacity_(capacity) {
  g_live_bytes.fetch_add(capacity_, std::memory_order_relaxed);
}

ring_buffer::~ring_buffer() {
  g_live_bytes.fetch_sub(capacity_, std::memory_order_relaxed);
  if (data_) g_allocated_bytes.fetch_sub(capacity_, std::memory_order_relaxed);
}

ring_buffer::ring_buffer(ring_buffer&& other) noexcept
    : data_(std::move(other.data_)),
      capacity_(std::exchange(other.capacity_, 0)),
      head_(std::exchange(other.head_, 0)),
      size_(std::exchange(other.size_, 0)) {}

ring_buffer& ring_buffer::operator=(ring_buffer&& other) noexcept {
  if (this != &other) {
    g_live_bytes.fetch_sub(capacity_, std::memory_order_relaxed);
    if (data_) g_allocated_bytes.fetch_sub(capacity_, std::memory_order_relaxed);
    data_ = std::move(other.data_);
    capacity_ = std::exchange(other.capacity_, 0);
    head_ = std::exchange(other.head_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

std::size_t ring_buffer::live_bytes() { return g_live_bytes.load(std::memory_order_relaxed); }
std::size_t ring_buffer::allocated_bytes() { return g_allocated_bytes.load(std::memory_order_relaxed); }

// Not value-initialized: bytes are read only where they were written, and
// pages never written are never touched.
std::byte* ring_buffer::storage() {
  if (!data_) {
    data_ = std::make_unique_for_overwrite<std::byte[]>(capacity_);
    g_allocated_bytes.fetch_add(capacity_, std::memory_order_relaxed);
  }
  return data_.get();
}

void ring_buffer::copy_in(std::size_t at, std::span<const std::byte> data) {
  std::byte* const base = storage();
  const std::size_t first = std::min(data.size(), capacity_ - at);
  if (data.data() != base + at) std::memcpy(base + at, data.data(), first);  // else in place
  std::memcpy(base, data.data() + first, data.size() - first);
}

void ring_buffer::copy_out(std::size_t at, std::span<std::byte> out) const {
  const std::size_t first = std::min(out.size(), capacity_ - at);
  std::memcpy(out.data(), data_.get() + at, first);
  std::memcpy(out.data() + first, data_.get(), out.size() - first);
}

std::size_t ring_buffer::write(std::span<const std::byte> data) {
  const std::size_t n = write_at(0, data);
  commit(n);
  return n;
}

std::size_t ring_buffer::write_at(std::size_t offset, std::span<const std::byte> data) {
  if (offset >= free()) return 0;
  const std::size_t n = std::min(data.size(), free() - offset);
  if (n == 0) return 0;
  // head_ + size_ + offset < head_ + capacity_ <= 2 * capacity_: one wrap at most.
  copy_in(wrap(head_ + size_ + offset), data.first(n));
  return n;
}

std::span<std::byte> ring_buffer::free_contiguous(std::size_t max) {
  if (free() == 0) return {};
  const std::size_t at = wrap(head_ + size_);
  return {storage() + at, std::min({max, free(), capacity_ - at})};
}

void ring_buffer::commit(std::size_t n) {
  assert(n <= free());
  // Clamped as well: a size past the capacity would read out of bounds.
  size_ += std::min(n, free());
}

std::size_t ring_buffer::read(std::span<std::byte> out) {
  const std::size_t n = peek(0, out);
  consume(n);
  return n;
}

std::size_t ring_buffer::peek(std::size_t offset, std::span<std::byte> out) const {
  if (offset >= size_) return 0;
  const std::size_t n = std::min(out.size(), size_ - offset);
  if (n == 0) return 0;
  copy_out(wrap(head_ + offset), out.first(n));
  return n;
}

std::span<const std::byte> ring_buffer::contiguous_at(std::size_t offset, std::size_t max) const {
  if (offset >= size_) return {};
  const std::size_t at = wrap(head_ + offset);
  return {data_.get() + at, std::min({max, size_ - offset, capacity_ - at})};
}

void ring_buffer::consume(std::size_t n) {
  assert(n <= size_);
  n = std::min(n, size_);
  // head_ is not reset when the ring empties: write_at() data past the end
  // is placed relative to it.
  head_ = wrap(head_ + n);
  size_ -= n;
}

void ring_buffer::grow(std::size_t capacity) {
  if (capacity <= capacity_) return;
  g_live_bytes.fetch_add(capacity - capacity_, std::memory_order_relaxed);
  if (data_) {
    auto bigger = std::make_unique_for_overwrite<std::byte[]>(capacity);
    // The whole old ring, front first: out-of-order bytes past the readable
    // ones keep their offsets.
    copy_out(head_, {bigger.get(), capacity_});
    g_allocated_bytes.fetch_add(capacity - capacity_, std::memory_order_relaxed);
    data_ = std::move(bigger);
    head_ = 0;
  }
  capacity_ = capacity;
}

void ring_buffer::clear() {
  head_ = 0;
  size_ = 0;
}

}  // namespace affine::stack::tcp
