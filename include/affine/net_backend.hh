#pragma once
// What a network backend implements behind the socket API of net.hh: the
// userspace stack on a DPDK port, or kernel sockets through io_uring. Apps do
// not use this header; backends and the runtime's setup do.

#include <expected>
#include <memory>
#include <system_error>

#include "affine/net.hh"

namespace affine::net::detail {

class stream_impl {
 public:
  virtual ~stream_impl() = default;
  virtual std::expected<std::size_t, std::error_code> read(std::span<std::byte> buf, std::uint64_t deadline_ns) = 0;
  // All of `data`.
  virtual std::expected<void, std::error_code> write(std::span<const std::byte> data, std::uint64_t deadline_ns) = 0;
  virtual std::expected<void, std::error_code> shutdown_write() = 0;
  virtual void close() = 0;  // idempotent
  virtual void abort() = 0;
  virtual std::expected<void, std::error_code> set_no_delay(bool on) = 0;
  virtual std::expected<void, std::error_code> set_keepalive(bool on) = 0;
  virtual endpoint local() const = 0;
  virtual endpoint remote() const = 0;
};

class listener_impl {
 public:
  virtual ~listener_impl() = default;
  virtual std::expected<std::unique_ptr<stream_impl>, std::error_code> accept(std::uint64_t deadline_ns) = 0;
  virtual endpoint local() const = 0;
  virtual void close() = 0;  // idempotent; wakes a fiber blocked in accept with ECANCELED
};

class udp_impl {
 public:
  virtual ~udp_impl() = default;
  virtual std::expected<void, std::error_code> send_to(endpoint to, std::span<const std::byte> datagram) = 0;
  virtual std::expected<udp_socket::datagram_info, std::error_code> recv_from(std::span<std::byte> buf,
                                                                              std::uint64_t deadline_ns) = 0;
  virtual endpoint local() const = 0;
  virtual void close() = 0;  // idempotent; wakes a fiber blocked in recv_from with ECANCELED
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
