#pragma once
// A fixed-capacity FIFO for the simulator's queues (run queues, RX rings,
// backlogs, sockets). Storage is sized once when the machine is built, so the
// event loop never allocates; a full ring refuses the push and the caller
// counts a drop, as a NIC ring or a socket buffer would.

#include <cassert>
#include <cstddef>
#include <vector>

namespace affine::sim {

template <typename T>
class ring {
 public:
  ring() = default;
  explicit ring(std::size_t capacity) : slots_(capacity) {}

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  bool full() const noexcept { return size_ == slots_.size(); }

  [[nodiscard]] bool push(const T& v) noexcept {
    if (full()) return false;
    slots_[(head_ + size_) % slots_.size()] = v;
    ++size_;
    return true;
  }
  // Precondition: not empty.
  T pop() noexcept {
    assert(!empty());
    T v = slots_[head_];
    head_ = (head_ + 1) % slots_.size();
    --size_;
    return v;
  }
  // The i-th oldest entry. Precondition: i < size().
  const T& at(std::size_t i) const noexcept { return slots_[(head_ + i) % slots_.size()]; }
  const T& front() const noexcept { return at(0); }
  // Removes the i-th oldest entry, keeping the others in order (a steal takes
  // a fiber from the middle of a run queue; queues are short).
  T take(std::size_t i) noexcept {
    assert(i < size_);
    T v = at(i);
    for (std::size_t k = i; k + 1 < size_; ++k) {
      slots_[(head_ + k) % slots_.size()] = slots_[(head_ + k + 1) % slots_.size()];
    }
    --size_;
    return v;
  }

 private:
  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace affine::sim
