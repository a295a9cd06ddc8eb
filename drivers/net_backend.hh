#pragma once
// What a network backend implements behind the socket API of net.hh: the
// userspace stack on a DPDK port, or kernel sockets through io_uring. Apps do
// not use this header; backends and the runtime's setup do.

#include <cstddef>
#include <expected>
#include <memory>
#include <span>
#include <system_error>

#include "affine/net.hh"

namespace affine::net::detail {

class multi_waiter;

class stream_impl {
 public:
  virtual ~stream_impl() = default;
  virtual std::expected<std::size_t, std::error_code> read(std::span<std::byte> buf, std::uint64_t deadline_ns) = 0;
  // All of `data`.
  virtual std::expected<void, std::error_code> write(std::span<const std::byte> data, std::uint64_t deadline_ns) = 0;
  // Zero-copy I/O (net.hh): each backend lends what it has.
  virtual std::expected<std::span<const std::byte>, std::error_code> read_view(std::uint64_t deadline_ns) = 0;
  virtual void consume(std::size_t n) = 0;
  virtual std::expected<std::span<std::byte>, std::error_code> write_view(std::uint64_t deadline_ns) = 0;
  virtual std::expected<void, std::error_code> commit(std::size_t n, std::uint64_t deadline_ns) = 0;
  virtual std::expected<void, std::error_code> shutdown_write() = 0;
  virtual void close() = 0;  // idempotent
  virtual void abort() = 0;
  virtual std::expected<void, std::error_code> set_no_delay(bool on) = 0;
  virtual std::expected<void, std::error_code> set_keepalive(bool on) = 0;
  virtual endpoint local() const = 0;
  virtual endpoint remote() const = 0;
  // What waits on this socket among others (net::wait_any); none: it
  // cannot be waited on that way.
  virtual multi_waiter* waiter() const { return nullptr; }
};

class listener_impl {
 public:
  virtual ~listener_impl() = default;
  virtual std::expected<std::unique_ptr<stream_impl>, std::error_code> accept(std::uint64_t deadline_ns) = 0;
  virtual endpoint local() const = 0;
  virtual void close() = 0;  // idempotent; wakes a fiber blocked in accept with ECANCELED
  virtual multi_waiter* waiter() const { return nullptr; }  // as stream_impl's
};

class udp_impl {
 public:
  virtual ~udp_impl() = default;
  virtual std::expected<void, std::error_code> send_to(endpoint to, std::span<const std::byte> datagram) = 0;
  virtual std::expected<udp_socket::datagram_info, std::error_code> recv_from(std::span<std::byte> buf,
                                                                              std::uint64_t deadline_ns) = 0;
  virtual endpoint local() const = 0;
  virtual void close() = 0;  // idempotent; wakes a fiber blocked in recv_from with ECANCELED
  virtual multi_waiter* waiter() const { return nullptr; }  // as stream_impl's
};

// net::wait_any for one kind of backend: every open entry's socket named
// this waiter (net_api.cc checks), so it may cast them to its own classes.
// Entries whose handle is closed are left alone (net_api.cc answers them).
class multi_waiter {
 public:
  // Precondition: in a fiber; entries validated; `ready` cleared. Sets the
  // `ready` of the entries it waits on; returns how many are ready, or
  // timed_out. A deadline already passed only looks.
  virtual std::expected<std::size_t, std::error_code> wait_any(std::span<wait_entry> entries,
                                                               std::uint64_t deadline_ns) = 0;

 protected:
  ~multi_waiter() = default;
};

// The implementation behind a handle (null when it is closed), for the
// backends' waiters.
struct handle_access {
  static stream_impl* of(const tcp_stream& s) { return s.impl_.get(); }
  static listener_impl* of(const tcp_listener& l) { return l.impl_.get(); }
  static udp_impl* of(const udp_socket& u) { return u.impl_.get(); }
};

// Per-entry state of a wait, on the waiting fiber's stack for a few
// entries, else in one allocation (bounded by max_wait_entries).
template <class T, std::size_t inline_count = 8>
class entry_states {
 public:
  explicit entry_states(std::size_t n) : n_(n) {
    if (n > inline_count) heap_ = std::make_unique<T[]>(n);
  }
  std::span<T> all() { return {heap_ ? heap_.get() : local_, n_}; }
  T& operator[](std::size_t i) { return all()[i]; }

 private:
  std::size_t n_;
  T local_[inline_count]{};
  std::unique_ptr<T[]> heap_;
};

class backend {
 public:
  virtual ~backend() = default;
  virtual std::expected<std::unique_ptr<listener_impl>, std::error_code> listen(const listen_options& opts) = 0;
  virtual std::expected<std::unique_ptr<stream_impl>, std::error_code> connect(endpoint to, std::uint64_t deadline_ns,
                                                                               const stream_options& opts) = 0;
  virtual std::expected<std::unique_ptr<udp_impl>, std::error_code> bind_udp(const udp_options& opts) = 0;
};

// The backend listen() and connect() use. Set once at start-up, before any
// fiber uses the API; the caller keeps it alive while the runtime runs.
void set_backend(backend* b) noexcept;
backend* current_backend() noexcept;

}  // namespace affine::net::detail
