#pragma once
// A bounded multi-producer multi-consumer channel between fibers on any
// cores. `send` suspends while the channel is full, `recv` while it is empty;
// both take a deadline. `close` wakes everyone: sends fail, receives drain
// what is left and then return nullopt. The capacity is fixed at
// construction: nothing grows without bound.

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "affine/sync.hh"

namespace affine {

enum class send_result : std::uint8_t { ok, closed, timeout, full };

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
      if (!not_full_.wait(lock_, until)) return send_result::timeout;
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

  // nullopt: closed and drained, or the deadline passed (see closed()).
  std::optional<T> recv(deadline until = {}) {
    for (;;) {
      lock_.lock();
      if (count_ > 0) return pop_locked();
      if (closed_ || !not_empty_.wait(lock_, until)) {
        if (closed_) lock_.unlock();
        return std::nullopt;
      }
    }
  }
  std::optional<T> try_recv() {
    lock_.lock();
    if (count_ > 0) return pop_locked();
    lock_.unlock();
    return std::nullopt;
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
  std::optional<T> pop_locked() {
    std::optional<T> v(std::move(*slots_[head_]));
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
