#pragma once
// The uring backend: the socket API of net.hh on kernel sockets, one
// io_uring per reactor core. Install it with install.hh.

#include "drivers/net_backend.hh"
#include "drivers/uring/ring.hh"

namespace affine::drivers::uring {

class uring_backend final : public net::detail::backend {
 public:
  explicit uring_backend(ring_set rings) : rings_(std::move(rings)) {}

  std::expected<std::unique_ptr<net::detail::listener_impl>, std::error_code> listen(
      const net::listen_options& opts) override;
  std::expected<std::unique_ptr<net::detail::stream_impl>, std::error_code> connect(
      net::endpoint to, std::uint64_t deadline_ns, const net::stream_options& opts) override;
  std::expected<std::unique_ptr<net::detail::udp_impl>, std::error_code> bind_udp(
      const net::udp_options& opts) override;

  const ring_set& rings() const { return rings_; }

 private:
  ring_set rings_;
};

}  // namespace affine::drivers::uring
