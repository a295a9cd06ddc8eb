#include "drivers/uring/backend.hh"

#include "drivers/uring/listener.hh"
#include "drivers/uring/stream.hh"
#include "drivers/uring/udp.hh"

namespace affine::drivers::uring {

std::expected<std::unique_ptr<net::detail::listener_impl>, std::error_code> uring_backend::listen(
    const net::listen_options& opts) {
  return uring_listener::listen(rings_, opts);
}

std::expected<std::unique_ptr<net::detail::stream_impl>, std::error_code> uring_backend::connect(
    net::endpoint to, std::uint64_t deadline_ns, const net::stream_options& opts) {
  return uring_stream::connect(rings_, to, deadline_ns, opts);
}

std::expected<std::unique_ptr<net::detail::udp_impl>, std::error_code> uring_backend::bind_udp(
    const net::udp_options& opts) {
  return uring_udp::bind(rings_, opts);
}

}  // namespace affine::drivers::uring
