#pragma once
// A bounded multi-producer multi-consumer channel between fibers on any
// cores. `send` suspends while the channel is full, `recv` while it is empty;
// both take a deadline and end on a stop request (fiber.hh). `close` wakes
// everyone: sends fail, receives drain what is left and then fail with
// `closed`. The capacity is fixed at construction: nothing grows without
// bound.

#include <cstddef>
#include <expected>
#include <optional>
#include <utility>
#include <vector>

#include "affine/sync.hh"

namespace affine {

// canceled: a stop request on the fiber's token (this_fiber::stop_token).
enum class send_result : std::uint8_t { ok, closed, timeout, full, canceled };
// Why recv or try_recv gave no value: closed and drained, the deadline
// passed, a stop request, nothing there (try_recv).
enum class recv_error : std::uint8_t { closed, timeout, canceled, empty };

template <class T>
class channel {
 public:
  explicit channel(std::size_t capacity) : slots_(capacity == 0 ? 1 : capacity) {}
  channel(const channel&) = delete;
  channel& operator=(const channel&) = delete;

  send_result send(T value, deadline until = {}) {
    for (;;) {
      lock_.lock();
      if (closed_) {
        lock_.unlock();
        return send_result::closed;
      }
      if (count_ < slots_.size()) {
        push_locked(std::move(value));
        return send_result::ok;
      }
      switch (not_full_.wait(lock_, until)) {
        case wait_result::notified: break;
        case wait_result::timed_out: return send_result::timeout;
        case wait_result::canceled: return send_result::canceled;
      }
    }
  }
  send_result try_send(T value) {
    lock_.lock();
    if (closed_) {
      lock_.unlock();
      return send_result::closed;
    }
    if (count_ == slots_.size()) {
      lock_.unlock();
      return send_result::full;
    }
    push_locked(std::move(value));
    return send_result::ok;
  }

  std::expected<T, recv_error> recv(deadline until = {}) {
    for (;;) {
      lock_.lock();
      if (count_ > 0) return pop_locked();
      if (closed_) {
        lock_.unlock();
        return std::unexpected(recv_error::closed);
      }
      switch (not_empty_.wait(lock_, until)) {
        case wait_result::notified: break;
        case wait_result::timed_out: return std::unexpected(recv_error::timeout);
        case wait_result::canceled: return std::unexpected(recv_error::canceled);
      }
    }
  }
  std::expected<T, recv_error> try_recv() {
    lock_.lock();
    if (count_ > 0) return pop_locked();
    const bool closed = closed_;
    lock_.unlock();
    return std::unexpected(closed ? recv_error::closed : recv_error::empty);
  }

  void close() {
    lock_.lock();
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
    lock_.unlock();
  }
  bool closed() const {
    lock_.lock();
    bool c = closed_;
    lock_.unlock();
    return c;
  }
  std::size_t size() const {
    lock_.lock();
    std::size_t n = count_;
    lock_.unlock();
    return n;
  }
  std::size_t capacity() const { return slots_.size(); }

 private:
  // Both take the lock held and release it.
  void push_locked(T&& v) {
    slots_[(head_ + count_) % slots_.size()] = std::move(v);
    ++count_;
    not_empty_.notify_one();
    lock_.unlock();
  }
  T pop_locked() {
    T v(std::move(*slots_[head_]));
    slots_[head_].reset();
    head_ = (head_ + 1) % slots_.size();
    --count_;
    not_full_.notify_one();
    lock_.unlock();
    return v;
  }

  mutable spinlock lock_;
  std::vector<std::optional<T>> slots_;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  bool closed_ = false;
  wait_queue not_empty_;
  wait_queue not_full_;
};

}  // namespace affine
